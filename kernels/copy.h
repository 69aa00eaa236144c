// Copy kernels for GPU-pair bandwidth: an SM-driven copy (the GPU's cores read or write the peer's
// memory, as opposed to the copy engines of cudaMemcpyPeerAsync), and a start gate that holds a
// stream until the host releases it, so every copy of a round starts at once (as nvbandwidth's
// spin kernel does).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace fabricmap::kernels {

// Copies `bytes` from `src` to `dst` (either may be a peer GPU's memory mapped into this device)
// with `blocks` thread blocks (0: enough to fill the device). Enqueued on `stream`.
cudaError_t smCopy(void* dst, const void* src, std::size_t bytes, int blocks, cudaStream_t stream);

// Enqueues a kernel on `stream` that spins until `*flag` (host memory mapped into the device,
// cudaHostAlloc with cudaHostAllocMapped) becomes non-zero; work queued after it waits.
cudaError_t startGate(volatile int* flag, cudaStream_t stream);

}  // namespace fabricmap::kernels
