// Test data and exact checks in GPU memory: the device side of core/pattern.h, for backends whose
// buffers live on the GPU. Each call enqueues on `stream`; nothing synchronizes unless it says so.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/types.h"
#include "core/output_source.h"
#include "core/pattern.h"

namespace fabricmap::kernels {

// Rank `rank`'s input pattern into `elems` elements.
cudaError_t fillInput(core::DType dtype, void* device, std::uint64_t elems, const core::Pattern& pattern,
                      int rank, cudaStream_t stream);
// `value` into `elems` elements (the poison before a check).
cudaError_t fillValue(core::DType dtype, void* device, std::uint64_t elems, double value,
                      cudaStream_t stream);

struct DeviceCheck {
  core::SourceRule rule;
  core::Pattern pattern;
  int rank;
  int nranks;
  int root;
  std::uint64_t block;
};
// Counts the output elements that differ from what the op must produce; synchronizes `stream`
// and returns the count (or the CUDA error through `error`).
std::uint64_t countWrong(core::DType dtype, const void* device, std::uint64_t elems,
                         const DeviceCheck& check, cudaStream_t stream, cudaError_t& error);
// Changes the element at `element` (device address) to a value no correct output holds (fault
// injection for tests).
cudaError_t corruptElement(core::DType dtype, void* element, const core::Pattern& pattern,
                           cudaStream_t stream);

}  // namespace fabricmap::kernels
