// CUDA device memory for the backends that measure from GPU memory (nccl, and ucx with
// --pair-memory cuda): checked runtime calls, an owned buffer, and the GPU a rank measures with.
// Built only with CUDA.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

#include "core/error.h"

// Checked CUDA runtime calls: a failure becomes a RuntimeFault naming the call.
#define FM_CHECK_CUDA(expr)                                                                   \
  do {                                                                                        \
    const cudaError_t fm_err_ = (expr);                                                       \
    if (fm_err_ != cudaSuccess) throw FM_FAULT(std::string("CUDA: ") + #expr + ": " +         \
                                               cudaGetErrorString(fm_err_));                  \
  } while (0)

namespace fabricmap::worker {

// Device memory that grows and is never shrunk (a sweep allocates its largest size once).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();
  void reserve(std::size_t bytes);
  std::byte* data() const { return data_; }

 private:
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

// Makes the GPU of local rank `localRank` current and returns its index: local ranks in turn over
// the first `gpusPerNode` GPUs this rank sees (0: all of them). A rank that sees none is a fault
// (preflight refuses such a run before it starts).
int useRankDevice(int localRank, int gpusPerNode);

// The PCI bus id of CUDA device `device` ("0000:07:00.0"); empty where CUDA cannot say.
std::string deviceBusIdOf(int device);

}  // namespace fabricmap::worker
