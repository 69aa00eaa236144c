#!/usr/bin/env bash
# fabricmap across leased nodes with Open MPI's mpirun: one rank per GPU on every host of a
# hostfile, the preflight first, then the measurement.
#
#   scripts/fabricmap-mpirun.sh HOSTFILE [fabricmap run options]
#   scripts/fabricmap-mpirun.sh hosts.txt --suite full -o results/provider-a.h5
#
# HOSTFILE: one host per line, "node01 slots=8" (slots = GPUs of that host). Environment:
#   FABRICMAP          the binary, the same path on every host (default: build/release/bin/fabricmap,
#                      made absolute)
#   GPUS_PER_NODE      ranks per host when the hostfile has no slots= (default: this host's GPUs, else 1)
#   FABRICMAP_BIND     mpirun --bind-to (default numa: each rank near its CPU memory; "none" to leave
#                      placement to the OS)
#   FABRICMAP_PML      Open MPI pml, e.g. ucx on InfiniBand/RoCE clusters (default: Open MPI's choice)
#   MPIRUN             mpirun to use (default mpirun); MPIRUN_ARGS: more mpirun options, split at spaces
#   FABRICMAP_PREFLIGHT  1 (default): run `fabricmap run --preflight` first and stop on a problem
# Every NCCL_* and UCX_* variable set here is passed to all ranks (-x), with PATH and LD_LIBRARY_PATH.
# Exit status: fabricmap's (0 ok, 1 wrong results, 2 usage or preflight problem, 3 hang or lost rank;
# 130 or 143 interrupted by SIGINT or SIGTERM).
set -uo pipefail

if [ $# -lt 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
hostfile=$1
shift
if [ ! -r "$hostfile" ]; then
  echo "fabricmap-mpirun: error: cannot read the hostfile '$hostfile'" >&2
  exit 2
fi
bin=${FABRICMAP:-build/release/bin/fabricmap}
[ "${bin#/}" = "$bin" ] && bin="$PWD/$bin"  # the same absolute path on every host
if [ ! -x "$bin" ]; then
  echo "fabricmap-mpirun: error: no fabricmap binary at '$bin' (build it, or set FABRICMAP)" >&2
  exit 2
fi

# hosts and ranks: slots= from the hostfile, else GPUS_PER_NODE, else this host's GPU count
hosts=$(grep -v '^[[:space:]]*\(#\|$\)' "$hostfile" | awk '{print $1}' | sort -u | wc -l)
slots=$(grep -o 'slots=[0-9]*' "$hostfile" | head -n 1 | cut -d= -f2)
local_gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
per_node=${slots:-${GPUS_PER_NODE:-$([ "${local_gpus:-0}" -gt 0 ] && echo "$local_gpus" || echo 1)}}
if [ "$hosts" -lt 1 ] || [ "$per_node" -lt 1 ]; then
  echo "fabricmap-mpirun: error: '$hostfile' names no host with slots" >&2
  exit 2
fi

args=(--hostfile "$hostfile" -np $((hosts * per_node)) --map-by "ppr:$per_node:node" --bind-to "${FABRICMAP_BIND:-numa}")
[ -n "${FABRICMAP_PML:-}" ] && args+=(--mca pml "$FABRICMAP_PML")
for var in $(compgen -e | grep -E '^(NCCL|UCX)_' || true); do args+=(-x "$var"); done
args+=(-x PATH -x LD_LIBRARY_PATH)
# shellcheck disable=SC2206  # MPIRUN_ARGS is split at spaces on purpose
extra=(${MPIRUN_ARGS:-})
mpirun=${MPIRUN:-mpirun}

echo "fabricmap-mpirun: $hosts host(s) x $per_node rank(s): $mpirun ${args[*]} ${extra[*]}"
if [ "${FABRICMAP_PREFLIGHT:-1}" = 1 ]; then
  "$mpirun" "${args[@]}" "${extra[@]}" "$bin" run --preflight "$@" || exit $?
fi
# Interrupted (Ctrl-C, a SIGTERM): mpirun ends the job and exits 1, which fabricmap gives wrong
# results; the run's own code, 128 + the signal (130, 143), is passed on instead.
"$mpirun" "${args[@]}" "${extra[@]}" "$bin" run "$@" &
pid=$!
interrupted=0
trap 'interrupted=130; kill -INT "$pid" 2>/dev/null' INT
trap 'interrupted=143; kill -TERM "$pid" 2>/dev/null' TERM
trap 'interrupted=129; kill -HUP "$pid" 2>/dev/null' HUP
while :; do
  wait "$pid"
  status=$?
  kill -0 "$pid" 2>/dev/null || break  # a trapped signal ended the wait, not mpirun
done
[ "$interrupted" -ne 0 ] && exit "$interrupted"
exit "$status"
