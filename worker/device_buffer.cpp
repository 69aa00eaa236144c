// CUDA device memory and the rank's GPU (see device_buffer.h).
#include "worker/device_buffer.h"

#include <algorithm>

namespace fabricmap::worker {

DeviceBuffer::~DeviceBuffer() {
  if (data_ != nullptr) cudaFree(data_);
}

void DeviceBuffer::reserve(std::size_t bytes) {
  if (bytes <= size_) return;
  if (data_ != nullptr) FM_CHECK_CUDA(cudaFree(data_));
  data_ = nullptr;
  size_ = 0;
  void* p = nullptr;
  FM_CHECK_CUDA(cudaMalloc(&p, bytes));
  data_ = static_cast<std::byte*>(p);
  size_ = bytes;
}

int useRankDevice(int localRank, int gpusPerNode) {
  int count = 0;
  FM_CHECK_CUDA(cudaGetDeviceCount(&count));
  const int spread = gpusPerNode > 0 ? std::min(gpusPerNode, count) : count;
  if (spread <= 0) throw FM_FAULT("no GPU visible to this rank");
  const int device = localRank % spread;
  FM_CHECK_CUDA(cudaSetDevice(device));
  return device;
}

std::string deviceBusIdOf(int device) {
  char bus[32] = {};
  return cudaDeviceGetPCIBusId(bus, sizeof bus, device) == cudaSuccess ? std::string(bus) : std::string();
}

}  // namespace fabricmap::worker
