#!/usr/bin/env bash
# The GPU check: on a machine with NVIDIA GPUs, builds for the local GPU and runs, in a few
# minutes, everything of fabricmap that needs a device, writing all output to one directory:
#   - nvidia-smi and `nvidia-smi topo -m`, and `fabricmap topo` (discovered and parsed);
#   - the GPU tests (kernels and the NCCL backend, exact results for every op and type);
#   - a NCCL collective sweep with correctness checks, one rank per GPU (one GPU: --min-group 1);
#   - the pairwise matrices, the training pattern and the scaling sweep when there are 2+ GPUs;
#   - the GPU-pair copy matrix (copy engine and SM kernel, write and read; on one GPU, two ranks
#     share it, which still runs every call of the copy path);
#   - device-to-device and host-device copy bandwidth (bench/gpu_copy_bw).
# usage: scripts/gpu-check.sh [OUTDIR]     (default: results/gpu-check-<UTC time>)
# Exit status: 0 when every part ran and passed, 1 otherwise (the log says which).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-results/gpu-check-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
log="$out/gpu-check.log"
failed=0
step() {  # step NAME COMMAND...: runs and logs one part; a failure is noted, the rest goes on
  local name=$1
  shift
  echo "== $name: $*" | tee -a "$log"
  local start=$SECONDS
  if "$@" >>"$log" 2>&1; then
    echo "   ok ($((SECONDS - start)) s)" | tee -a "$log"
  else
    echo "   FAILED ($((SECONDS - start)) s)" | tee -a "$log"
    failed=1
  fi
}

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
if [ "${gpus:-0}" -lt 1 ]; then
  echo "gpu-check: no GPU visible (nvidia-smi -L lists none)" | tee -a "$log"
  exit 1
fi
echo "gpu-check: $gpus GPU(s), output in $out" | tee -a "$log"
nvidia-smi >"$out/nvidia-smi.txt" 2>&1
nvidia-smi topo -m >"$out/nvidia-smi-topo.txt" 2>&1

step setup scripts/setup.sh gpu
step configure cmake -S . -B build/gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=native \
  -DFABRICMAP_ENABLE_CUDA=ON -DFABRICMAP_ENABLE_NCCL=ON
step build cmake --build build/gpu -j "$(nproc)"
bin=build/gpu/bin

gpu_tests() {  # one rank per GPU; exit 77 (a test skipped itself: one GPU, no pair) is not a failure
  local rc=0
  tests/gpu/run_gpu_tests.sh mpirun build/gpu/tests/gpu/fabricmap_gpu_tests --gtest_output="xml:$out/gpu-tests.xml" ||
    rc=$?
  [ "$rc" -eq 77 ] && echo "some GPU tests skipped themselves (see above)" && rc=0
  return "$rc"
}
step gpu-tests gpu_tests
step topo-discovered sh -c "$bin/fabricmap topo --json > '$out/topo-discovered.json'"
step topo-parsed sh -c "$bin/fabricmap topo --file '$out/nvidia-smi-topo.txt' --json > '$out/topo-parsed.json'"
min_group=2
[ "$gpus" -eq 1 ] && min_group=1
step nccl-sweep mpirun -np "$gpus" --bind-to none "$bin/fabricmap" run --backend nccl --collectives \
  --min-group "$min_group" -b 8 -e 1G -f 4 -n 20 -w 5 -d float,bfloat16 -o "$out/nccl-sweep.h5"
if [ "$gpus" -ge 2 ]; then
  step nccl-pairwise mpirun -np "$gpus" --bind-to none "$bin/fabricmap" run --backend nccl --pairwise \
    --pair-bytes 256M --pair-iters 10 -o "$out/nccl-pairwise.h5"
fi
if [ "$gpus" -ge 2 ]; then
  # the training pattern (every traffic type on its own stream and communicator, alone and all at
  # once) and the scaling sweep; with 4+ GPUs a layout of TP pairs and DP across them
  layout="tp=$gpus"
  [ "$gpus" -ge 4 ] && layout="tp=2,dp=$((gpus / 2))"
  step nccl-training mpirun -np "$gpus" --bind-to none "$bin/fabricmap" run --backend nccl --patterns training \
    --layout "$layout" --scaling -o "$out/nccl-training.h5"
  step nccl-training-show sh -c "$bin/fabricmap show '$out/nccl-training.h5' > '$out/nccl-training.txt'"
fi
copy_ranks=$gpus
[ "$gpus" -eq 1 ] && copy_ranks=2
step gpu-copy-tests mpirun -np "$copy_ranks" --oversubscribe build/gpu/tests/gpu/fabricmap_gpu_tests \
  --gtest_filter='NcclBackend.GpuPairCopies*' --gtest_output="xml:$out/gpu-copy-tests.xml"
step gpu-copies mpirun -np "$copy_ranks" --oversubscribe --bind-to none "$bin/fabricmap" run --backend nccl \
  --copies --gpus-per-node "$gpus" --copy-bytes 256M --copy-iters 10 -o "$out/gpu-copies.h5"
step gpu-copies-show sh -c "$bin/fabricmap show '$out/gpu-copies.h5' > '$out/gpu-copies.txt'"
step cuda-graph mpirun -np "$gpus" --bind-to none "$bin/fabricmap" run --backend nccl --collectives \
  --cuda-graph --min-group "$min_group" --ops all_reduce -b 8 -e 64M -f 8 -n 20 -o "$out/nccl-graph.h5"
step copy-bandwidth sh -c "$bin/fabricmap_gpu_copy_bw > '$out/copy-bandwidth.txt'"
step show sh -c "$bin/fabricmap show '$out/nccl-sweep.h5' > '$out/nccl-sweep.txt'"

echo "gpu-check: $( [ $failed -eq 0 ] && echo passed || echo 'FAILED (see the log)' ); output in $out" | tee -a "$log"
exit $failed
