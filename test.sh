#!/usr/bin/env bash
# Sets up, builds (warnings are errors) and runs the whole test suite with ctest.
#   ./test.sh                 everything CI runs: the release tiers, then ASan + UBSan, then fuzzing
#   ./test.sh --quick         the release tiers only (unit, mpi, cluster, slurm, report, gpu)
#   ./test.sh -L unit         other arguments go to ctest on the release build (and skip the rest)
set -uo pipefail
cd "$(dirname "$0")"
quick=0
if [ "${1:-}" = --quick ]; then
  quick=1
  shift
fi
scripts/setup.sh test || exit 1
scripts/build.sh release || exit 1

log=$(mktemp)
trap 'rm -f "$log"' EXIT
ctest --preset release -j "$(nproc)" "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

# The AddressSanitizer + UBSan build (host code; CUDA off; only the gtest binaries it runs) runs the
# unit and multi-rank gtests: any sanitizer report fails them (leak checks are off: Open MPI keeps
# allocations until exit).
# FABRICMAP_SKIP_ASAN=1 skips it, for a quick local run.
if [ "${FABRICMAP_SKIP_ASAN:-0}" != 1 ] && [ $# -eq 0 ] && [ "$quick" -eq 0 ]; then
  scripts/build.sh asan || exit 1
  ctest --preset asan -j "$(nproc)" -R '^(unit\.|mpi\.collectives\.)' 2>&1 | tee -a "$log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
# The fuzz targets (tests/fuzz: clang, libFuzzer, ASan + UBSan), each for 30 s from its seed
# corpus: any crash, sanitizer report, leak or slow input fails them. FABRICMAP_SKIP_FUZZ=1 skips.
if [ "${FABRICMAP_SKIP_FUZZ:-0}" != 1 ] && [ $# -eq 0 ] && [ "$quick" -eq 0 ]; then
  scripts/build.sh fuzz || exit 1
  ctest --preset fuzz -j "$(nproc)" 2>&1 | tee -a "$log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
echo
grep -E "tests passed|tests failed" "$log" | tail -n 3
exit "$status"
