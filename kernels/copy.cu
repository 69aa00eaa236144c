// SM copy and start-gate kernels (see copy.h).
#include "kernels/copy.h"

#include <cstdint>

namespace fabricmap::kernels {
namespace {

constexpr int kThreads = 512;

// 16-byte vectors for the aligned body, bytes for the ragged ends.
__global__ void copyKernel(const std::byte* src, std::byte* dst, std::size_t bytes) {
  const auto s = reinterpret_cast<std::uintptr_t>(src);
  const auto d = reinterpret_cast<std::uintptr_t>(dst);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  std::size_t head = 0;
  if (s % 16 == d % 16) {
    head = (16 - s % 16) % 16;
    if (head > bytes) head = bytes;
    const std::size_t vectors = (bytes - head) / 16;
    const auto* vs = reinterpret_cast<const int4*>(src + head);
    auto* vd = reinterpret_cast<int4*>(dst + head);
    for (std::size_t i = first; i < vectors; i += stride) vd[i] = vs[i];
    const std::size_t tail = head + vectors * 16;
    for (std::size_t i = first; i < head; i += stride) dst[i] = src[i];
    for (std::size_t i = tail + first; i < bytes; i += stride) dst[i] = src[i];
  } else {
    for (std::size_t i = first; i < bytes; i += stride) dst[i] = src[i];
  }
}

__global__ void gateKernel(volatile int* flag) {
  while (*flag == 0) {
#if __CUDA_ARCH__ >= 700
    __nanosleep(256);
#endif
  }
}

}  // namespace

cudaError_t smCopy(void* dst, const void* src, std::size_t bytes, int blocks, cudaStream_t stream) {
  if (bytes == 0) return cudaSuccess;
  if (blocks <= 0) {
    int device = 0;
    int sms = 0;
    cudaError_t e = cudaGetDevice(&device);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    if (e != cudaSuccess) return e;
    blocks = 4 * sms;
  }
  copyKernel<<<blocks, kThreads, 0, stream>>>(static_cast<const std::byte*>(src), static_cast<std::byte*>(dst),
                                              bytes);
  return cudaGetLastError();
}

cudaError_t startGate(volatile int* flag, cudaStream_t stream) {
  gateKernel<<<1, 1, 0, stream>>>(flag);
  return cudaGetLastError();
}

}  // namespace fabricmap::kernels
