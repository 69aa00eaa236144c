// Fill, poison, verify and corrupt kernels, one instantiation per element type (see patterns.h).
// Values are small integers (core/pattern.h), exact in every type, so checks compare exactly.
#include "kernels/patterns.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

namespace fabricmap::kernels {
namespace {

constexpr int kThreads = 256;

// Conversions between the pattern's doubles and each element type, on the device.
template <class T>
__device__ T fromDouble(double v) {
  return static_cast<T>(v);
}
template <>
__device__ __half fromDouble<__half>(double v) {
  return __double2half(v);
}
template <>
__device__ __nv_bfloat16 fromDouble<__nv_bfloat16>(double v) {
  return __double2bfloat16(v);
}

template <class T>
__device__ double toDouble(T v) {
  return static_cast<double>(v);
}
template <>
__device__ double toDouble<__half>(__half v) {
  return static_cast<double>(__half2float(v));
}
template <>
__device__ double toDouble<__nv_bfloat16>(__nv_bfloat16 v) {
  return static_cast<double>(__bfloat162float(v));
}

template <class T>
__global__ void fillInputKernel(T* out, std::uint64_t elems, core::Pattern pattern, int rank) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < elems;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    out[i] = fromDouble<T>(pattern.input(rank, i));
  }
}

template <class T>
__global__ void fillValueKernel(T* out, std::uint64_t elems, double value) {
  const T v = fromDouble<T>(value);
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < elems;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    out[i] = v;
  }
}

template <class T>
__global__ void countWrongKernel(const T* out, std::uint64_t elems, DeviceCheck check,
                                 unsigned long long* wrong) {
  unsigned long long mine = 0;
  for (std::uint64_t j = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; j < elems;
       j += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const core::OutputSource src =
        core::sourceOf(check.rule, check.rank, check.nranks, check.root, check.block, j);
    const double expected =
        src.reduced ? check.pattern.reduced(src.index) : check.pattern.input(src.rank, src.index);
    // compare in the element type: the expected value converted exactly as the data was
    mine += toDouble<T>(out[j]) != toDouble<T>(fromDouble<T>(expected)) ? 1 : 0;
  }
  if (mine != 0) atomicAdd(wrong, mine);
}

unsigned gridFor(std::uint64_t elems) {
  const std::uint64_t blocks = (elems + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::clamp<std::uint64_t>(blocks, 1, 65535));
}

// Calls f(T{}) with the element type of `dtype`.
template <class F>
cudaError_t withType(core::DType dtype, F&& f) {
  using core::DType;
  switch (dtype) {
    case DType::kInt8: return f(std::int8_t{});
    case DType::kUint8: return f(std::uint8_t{});
    case DType::kInt32: return f(std::int32_t{});
    case DType::kUint32: return f(std::uint32_t{});
    case DType::kInt64: return f(std::int64_t{});
    case DType::kUint64: return f(std::uint64_t{});
    case DType::kHalf: return f(__half{});
    case DType::kFloat: return f(float{});
    case DType::kDouble: return f(double{});
    case DType::kBfloat16: return f(__nv_bfloat16{});
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t fillInput(core::DType dtype, void* device, std::uint64_t elems, const core::Pattern& pattern,
                      int rank, cudaStream_t stream) {
  if (elems == 0) return cudaSuccess;
  return withType(dtype, [&](auto zero) {
    using T = decltype(zero);
    fillInputKernel<T><<<gridFor(elems), kThreads, 0, stream>>>(static_cast<T*>(device), elems, pattern, rank);
    return cudaGetLastError();
  });
}

cudaError_t fillValue(core::DType dtype, void* device, std::uint64_t elems, double value,
                      cudaStream_t stream) {
  if (elems == 0) return cudaSuccess;
  return withType(dtype, [&](auto zero) {
    using T = decltype(zero);
    fillValueKernel<T><<<gridFor(elems), kThreads, 0, stream>>>(static_cast<T*>(device), elems, value);
    return cudaGetLastError();
  });
}

std::uint64_t countWrong(core::DType dtype, const void* device, std::uint64_t elems,
                         const DeviceCheck& check, cudaStream_t stream, cudaError_t& error) {
  error = cudaSuccess;
  if (elems == 0) return 0;
  unsigned long long* counter = nullptr;
  if ((error = cudaMallocAsync(reinterpret_cast<void**>(&counter), sizeof *counter, stream)) != cudaSuccess) {
    return 0;
  }
  unsigned long long host = 0;
  error = cudaMemsetAsync(counter, 0, sizeof *counter, stream);
  if (error == cudaSuccess) {
    error = withType(dtype, [&](auto zero) {
      using T = decltype(zero);
      countWrongKernel<T><<<gridFor(elems), kThreads, 0, stream>>>(static_cast<const T*>(device), elems,
                                                                  check, counter);
      return cudaGetLastError();
    });
  }
  if (error == cudaSuccess) error = cudaMemcpyAsync(&host, counter, sizeof host, cudaMemcpyDeviceToHost, stream);
  const cudaError_t freed = cudaFreeAsync(counter, stream);
  const cudaError_t synced = cudaStreamSynchronize(stream);
  if (error == cudaSuccess) error = freed != cudaSuccess ? freed : synced;
  return host;
}

cudaError_t corruptElement(core::DType dtype, void* element, const core::Pattern& pattern,
                           cudaStream_t stream) {
  return fillValue(dtype, element, 1, pattern.poison(), stream);
}

}  // namespace fabricmap::kernels
