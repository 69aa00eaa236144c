#!/usr/bin/env bash
# Runs the GPU tests with one rank per visible GPU (the pair and copy tests need two), or reports
# the whole tier skipped (exit 77, CTest's SKIP_RETURN_CODE) where no GPU is visible.
# usage: run_gpu_tests.sh MPIEXEC TEST_BINARY [gtest arguments...]
set -euo pipefail
mpiexec=$1
binary=$2
shift 2
gpus=0
if command -v nvidia-smi >/dev/null 2>&1; then
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
fi
if [ -n "${CUDA_VISIBLE_DEVICES+set}" ]; then  # the devices the tests may use, when restricted
  visible=$(tr ',' '\n' <<<"$CUDA_VISIBLE_DEVICES" | grep -c '[^[:space:]]' || true)
  [ "$visible" -lt "$gpus" ] && gpus=$visible
fi
if [ "${gpus:-0}" -lt 1 ]; then
  echo "no GPU visible: the GPU tests are skipped"
  exit 77
fi
echo "$gpus GPU(s): $gpus rank(s)"
exec "$mpiexec" -n "$gpus" --oversubscribe "$binary" "$@"
