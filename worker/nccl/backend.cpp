// NCCL and CUDA library versions (see backend.h).
#include "worker/nccl/backend.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <fmt/format.h>

namespace fabricmap::worker::nccl {
namespace {

std::string cudaVersionString(int v) {
  if (v <= 0) return "none";
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}

}  // namespace

std::string libraryVersion() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "unknown";
  // NCCL >= 2.9 encodes major*10000 + minor*100 + patch.
  return fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100);
}

std::string cudaRuntimeVersion() {
  int v = 0;
  return cudaRuntimeGetVersion(&v) == cudaSuccess ? cudaVersionString(v) : "unknown";
}

std::string cudaDriverVersion() {
  int v = 0;
  return cudaDriverGetVersion(&v) == cudaSuccess ? cudaVersionString(v) : "none";
}

}  // namespace fabricmap::worker::nccl
