#!/usr/bin/env bash
# Sets up, builds (warnings are errors) and runs the whole test suite with ctest.
#   ./test.sh                 everything CI runs: the release tiers, then the sanitizer tier (gtests
#                             under ASan + UBSan, then fuzzing)
#   ./test.sh --quick         the release tiers only (unit, mpi, cluster, slurm, report, sim, gpu)
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
scripts/build.sh sim || exit 1  # fabricmap for SimGrid SMPI: the sim tier's simulated fat trees

log=$(mktemp)
trap 'rm -f "$log"' EXIT
ctest --preset release -j "$(nproc)" "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

# The sanitizer tier: one clang build with AddressSanitizer + UBSan (the fuzz preset; host code,
# CUDA off). It runs the unit and multi-rank gtests again (any sanitizer report fails them; leak
# checks off: Open MPI keeps allocations until exit), then the fuzz targets (tests/fuzz: libFuzzer),
# each for 30 s from its seed corpus (any crash, sanitizer report, leak or slow input fails them).
# FABRICMAP_SKIP_ASAN=1 skips the gtests, FABRICMAP_SKIP_FUZZ=1 the fuzz targets.
asan=0
fuzz=0
if [ $# -eq 0 ] && [ "$quick" -eq 0 ]; then
  [ "${FABRICMAP_SKIP_ASAN:-0}" != 1 ] && asan=1
  [ "${FABRICMAP_SKIP_FUZZ:-0}" != 1 ] && fuzz=1
fi
if [ "$asan" -eq 1 ] || [ "$fuzz" -eq 1 ]; then
  scripts/build.sh fuzz || exit 1
fi
if [ "$asan" -eq 1 ]; then
  ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ctest --preset fuzz -j "$(nproc)" -R '^(unit\.|mpi\.collectives\.|mpi\.ucx\.)' 2>&1 | tee -a "$log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
if [ "$fuzz" -eq 1 ]; then
  ctest --preset fuzz -j "$(nproc)" -L fuzz 2>&1 | tee -a "$log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
echo
grep -E "tests passed|tests failed" "$log" | tail -n 3
exit "$status"
