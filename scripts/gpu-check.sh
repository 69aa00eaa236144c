#!/usr/bin/env bash
# The GPU check: on a machine with NVIDIA GPUs, runs in a few minutes everything of fabricmap that
# needs a device, side by side with the reference tools where they are there, writing all output to
# one directory:
#   - nvidia-smi and `nvidia-smi topo -m`, and `fabricmap topo` (discovered and parsed);
#   - `fabricmap inventory` (NVML's view of each GPU's memory, GPUDirect by module or dma-buf);
#   - the GPU tests (kernels and the NCCL backend, exact results for every op and type), once more
#     under compute-sanitizer's memcheck where it is installed;
#   - NCCL collective sweeps with correctness checks, one rank per GPU (one GPU: --min-group 1):
#     every type at a few sizes, and the nccl-tests sizes (-b 8 -e 1G -f 2) of five ops, twice;
#   - nccl-tests (all_reduce, all_gather, reduce_scatter, alltoall, sendrecv _perf) at the same
#     sizes, each run before one of fabricmap's, when the binaries are on the PATH;
#   - the pairwise matrices, the training pattern and the scaling sweep when there are 2+ GPUs;
#   - the GPU-pair copy matrix (copy engine and SM kernel, write and read; on one GPU, two ranks
#     share it, which still runs every call of the copy path), and nvbandwidth when it is there;
#   - the ucx backend's pairs from GPU memory (--pair-memory cuda, tag and rma) where the UCX there
#     is built with CUDA (the endpoints then say GPUDirect RDMA, CUDA IPC or staged);
#   - device-to-device and host-device copy bandwidth (bench/gpu_copy_bw);
#   - figures.md: fabricmap against the reference tools (bench/gpu_figures.py).
# usage: scripts/gpu-check.sh [OUTDIR]     (default: results/gpu-check-<UTC time>)
# FABRICMAP_GPU_BUNDLE=DIR: use the programs of a bundle made by scripts/gpu-bundle.sh (a machine
# without this project's libraries or a package registry) instead of setting up and building.
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
has() { command -v "$1" >/dev/null 2>&1; }
limit=${GPU_CHECK_STEP_SECONDS:-150}  # no part may hang the check: each launch is cut off after this
mpirun() { timeout -k 10 "$limit" "$(type -P mpirun)" "$@"; }

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
if [ "${gpus:-0}" -lt 1 ]; then
  echo "gpu-check: no GPU visible (nvidia-smi -L lists none)" | tee -a "$log"
  exit 1
fi
echo "gpu-check: $gpus GPU(s), output in $out" | tee -a "$log"
nvidia-smi >"$out/nvidia-smi.txt" 2>&1
nvidia-smi topo -m >"$out/nvidia-smi-topo.txt" 2>&1

if [ -n "${FABRICMAP_GPU_BUNDLE:-}" ]; then
  # shellcheck source=/dev/null
  source "$FABRICMAP_GPU_BUNDLE/env.sh"
  bin=$(cd "$FABRICMAP_GPU_BUNDLE/bin" && pwd)
  tests_bin=$bin/fabricmap_gpu_tests
  step bundle-libraries sh -c "! ldd '$bin/fabricmap' '$tests_bin' | grep 'not found'"
  echo "NCCL from ${FABRICMAP_NCCL_LIB_DIR:-?}; $(ldd --version | head -1)" >>"$log"
else
  step setup scripts/setup.sh gpu
  step configure cmake -S . -B build/gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=native \
    -DFABRICMAP_ENABLE_CUDA=ON -DFABRICMAP_ENABLE_NCCL=ON
  step build cmake --build build/gpu -j "$(nproc)"
  bin=build/gpu/bin
  tests_bin=build/gpu/tests/gpu/fabricmap_gpu_tests
fi
gpu_tests() {  # one rank per GPU; exit 77 (a test skipped itself: one GPU, no pair) is not a failure
  local rc=0
  timeout -k 10 "$limit" tests/gpu/run_gpu_tests.sh mpirun "$tests_bin" --gtest_output="xml:$out/gpu-tests.xml" ||
    rc=$?
  [ "$rc" -eq 77 ] && echo "some GPU tests skipped themselves (see above)" && rc=0
  return "$rc"
}
step gpu-tests gpu_tests
step topo-discovered sh -c "$bin/fabricmap topo --json > '$out/topo-discovered.json'"
step topo-parsed sh -c "$bin/fabricmap topo --file '$out/nvidia-smi-topo.txt' --json > '$out/topo-parsed.json'"
step inventory sh -c "$bin/fabricmap inventory > '$out/inventory.txt' && $bin/fabricmap inventory --json > '$out/inventory.json'"
min_group=2
[ "$gpus" -eq 1 ] && min_group=1
nccl() { mpirun -np "$gpus" --bind-to none "$bin/fabricmap" run --backend nccl --min-group "$min_group" "$@"; }
step nccl-every-type nccl --collectives -b 8 -e 16M -f 8 -n 10 -w 2 -d all -o "$out/nccl-types.h5"
# nccl-tests' sizes and iterations, its runs interleaved with fabricmap's (these machines drift)
sizes=(-b 8 -e 1G -f 2 -n 20 -w 5)
peer_ops=(all_reduce all_gather reduce_scatter alltoall sendrecv)
nccl_tests() {  # nccl_tests ROUND: each op's nccl-tests log, one process driving every GPU (-g)
  local op
  for op in "${peer_ops[@]}"; do
    has "${op}_perf" || continue
    step "nccl-tests-$op-$1" timeout -k 10 "$limit" sh -c "mpirun -np 1 --bind-to none ${op}_perf ${sizes[*]} -g $gpus -c 1 > '$out/nccl-tests-$op-$1.log' 2>&1"
  done
}
for round in 1 2; do
  nccl_tests "$round"
  step "nccl-sweep-$round" nccl --collectives "${sizes[@]}" -d float --ops "$(IFS=,; echo "${peer_ops[*]}")" \
    -o "$out/nccl-sweep-$round.h5"
done
for round in 1 2; do  # nccl-tests' logs as fabricmap reads them: the importer on this machine's logs
  logs=("$out"/nccl-tests-*-"$round".log)
  [ -e "${logs[0]}" ] &&
    step "import-nccl-tests-$round" "$bin/fabricmap" import nccl-tests "${logs[@]}" -o "$out/nccl-tests-$round.h5" --force
done
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
step gpu-copy-tests mpirun -np "$copy_ranks" --oversubscribe "$tests_bin" \
  --gtest_filter='NcclBackend.GpuPairCopies*' --gtest_output="xml:$out/gpu-copy-tests.xml"
step gpu-copies mpirun -np "$copy_ranks" --oversubscribe --bind-to none "$bin/fabricmap" run --backend nccl \
  --copies --gpus-per-node "$gpus" --copy-bytes 256M --copy-iters 10 -o "$out/gpu-copies.h5"
step gpu-copies-show sh -c "$bin/fabricmap show '$out/gpu-copies.h5' > '$out/gpu-copies.txt'"
step cuda-graph mpirun -np "$gpus" --bind-to none "$bin/fabricmap" run --backend nccl --collectives \
  --cuda-graph --min-group "$min_group" --ops all_reduce -b 8 -e 64M -f 8 -n 20 -o "$out/nccl-graph.h5"
ucx_cuda() {  # ucx_cuda API: pairs from GPU memory over UCX; a UCX without CUDA (exit 2, named) is noted
  local rc=0 text="$out/ucx-cuda-$1.txt"
  mpirun -np "$copy_ranks" --oversubscribe --bind-to none "$bin/fabricmap" run --backend ucx --ucx-api "$1" \
    --pair-memory cuda --pairwise --pair-bytes 64M --pair-iters 10 -o "$out/ucx-cuda-$1.h5" >"$text" 2>&1 || rc=$?
  cat "$text"
  if [ "$rc" -eq 2 ] && grep -q "moves host memory only\|backend 'ucx' is not available" "$text"; then
    echo "not measured: this machine's UCX (or build) has no CUDA"
    return 0
  fi
  return "$rc"
}
step ucx-cuda-tag ucx_cuda tag
step ucx-cuda-rma ucx_cuda rma
step copy-bandwidth sh -c "$bin/fabricmap_gpu_copy_bw > '$out/copy-bandwidth.txt'"
if has nvbandwidth; then
  step nvbandwidth timeout -k 10 "$limit" sh -c "nvbandwidth -t device_local_copy host_to_device_memcpy_ce \
    device_to_host_memcpy_ce host_to_device_memcpy_sm device_to_host_memcpy_sm device_to_device_memcpy_write_ce \
    device_to_device_memcpy_read_ce device_to_device_memcpy_write_sm > '$out/nvbandwidth.txt' 2>&1"
fi
step show sh -c "$bin/fabricmap show '$out/nccl-sweep-1.h5' > '$out/nccl-sweep.txt'"
step show-types sh -c "$bin/fabricmap show '$out/nccl-types.h5' > '$out/nccl-types.txt'"
if has compute-sanitizer; then  # last, the slowest: memcheck of our kernels and NCCL calls, one rank
  step gpu-tests-memcheck timeout -k 10 120 mpirun -np 1 compute-sanitizer --tool memcheck --report-api-errors no \
    --error-exitcode 3 \
    "$tests_bin" --gtest_filter='Kernels.*:NcclBackend.EveryOp*'
fi
step figures sh -c "env -u LD_LIBRARY_PATH python3 bench/gpu_figures.py '$out' > '$out/figures.md'"

echo "gpu-check: $( [ $failed -eq 0 ] && echo passed || echo 'FAILED (see the log)' ); output in $out" | tee -a "$log"
exit $failed
