#!/usr/bin/env bash
# Sets up, builds (warnings are errors) and runs the whole test suite with ctest.
set -uo pipefail
cd "$(dirname "$0")"
scripts/setup.sh || exit 1
scripts/build.sh release || exit 1

log=$(mktemp)
trap 'rm -f "$log"' EXIT
ctest --preset release -j "$(nproc)" "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
echo
grep -E "tests passed|tests failed" "$log" | tail -n 1
exit "$status"
