#!/usr/bin/env bash
# Sets up and builds fabricmap, then runs the default quick suite under mpirun on this machine.
#   ./run.sh                       4 ranks (or one per GPU), results/<UTC time>.h5
#   ./run.sh -np 8 -b 1K -e 64M    8 ranks; everything else goes to `fabricmap run`
#   FABRICMAP_NP=2 ./run.sh --ops all_reduce
set -euo pipefail
cd "$(dirname "$0")"

np=${FABRICMAP_NP:-}
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    -np|--np)
      [ $# -ge 2 ] || { echo "run.sh: $1 needs a rank count" >&2; exit 2; }
      np=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done

# only what running needs: the fabricmap binary, no tests (./test.sh builds those)
scripts/setup.sh run
cmake --preset release -DBUILD_TESTING=OFF >/dev/null
cmake --build --preset release -j "$(nproc)" --target fabricmap >/dev/null

if [ -z "$np" ]; then
  gpus=0
  if command -v nvidia-smi >/dev/null 2>&1; then
    gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
  fi
  np=$(( gpus > 0 ? gpus : 4 ))
fi
case "$np" in
  ''|*[!0-9]*|0) echo "run.sh: the rank count must be a positive integer (got '$np')" >&2; exit 2 ;;
esac

launcher=(mpirun -np "$np" --oversubscribe)
[ "$(id -u)" -eq 0 ] && launcher+=(--allow-run-as-root)
if [ -t 2 ]; then
  args=(--progress=live "${args[@]}")
  # mpirun forwards a rank's stdout and stderr separately and may reorder them; on one terminal,
  # merge them so the progress line is cleared before each table row, not torn by it.
  [ -t 1 ] && launcher+=(--merge-stderr-to-stdout)
fi
echo "run.sh: ${launcher[*]} build/release/bin/fabricmap run ${args[*]}" >&2
exec "${launcher[@]}" build/release/bin/fabricmap run "${args[@]}"
