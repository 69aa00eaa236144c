// CUDA/NCCL helpers of the NCCL backend (see device.h).
#include "worker/nccl/device.h"

#include <chrono>
#include <thread>

#include <fmt/format.h>

namespace fabricmap::worker::nccl {

ncclDataType_t ncclType(core::DType t) {
  using core::DType;
  switch (t) {
    case DType::kInt8: return ncclInt8;
    case DType::kUint8: return ncclUint8;
    case DType::kInt32: return ncclInt32;
    case DType::kUint32: return ncclUint32;
    case DType::kInt64: return ncclInt64;
    case DType::kUint64: return ncclUint64;
    case DType::kHalf: return ncclFloat16;
    case DType::kFloat: return ncclFloat32;
    case DType::kDouble: return ncclFloat64;
    case DType::kBfloat16: return ncclBfloat16;
  }
  return ncclFloat32;
}

ncclRedOp_t ncclOp(core::RedOp op) {
  switch (op) {
    case core::RedOp::kSum: return ncclSum;
    case core::RedOp::kProd: return ncclProd;
    case core::RedOp::kMin: return ncclMin;
    case core::RedOp::kMax: return ncclMax;
  }
  return ncclSum;
}

Stream::Stream() { FM_CHECK_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }

Stream::~Stream() {
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

void waitStream(cudaStream_t stream, ncclComm_t comm, double timeoutSeconds, const std::string& what) {
  const auto start = std::chrono::steady_clock::now();
  auto pause = std::chrono::microseconds(5);
  while (true) {
    const cudaError_t state = cudaStreamQuery(stream);
    if (state == cudaSuccess) return;
    if (state != cudaErrorNotReady) {
      if (comm != nullptr) ncclCommAbort(comm);
      throw FM_FAULT(fmt::format("CUDA error while waiting for {}: {}", what, cudaGetErrorString(state)));
    }
    if (comm != nullptr) {
      ncclResult_t async = ncclSuccess;
      ncclCommGetAsyncError(comm, &async);
      if (async != ncclSuccess && async != ncclInProgress) {
        ncclCommAbort(comm);
        throw FM_FAULT(fmt::format("NCCL error during {}: {}", what, ncclGetErrorString(async)));
      }
    }
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited > timeoutSeconds) {
      if (comm != nullptr) ncclCommAbort(comm);
      throw FM_FAULT(fmt::format("{} did not complete within {:.0f} s; communicator aborted", what,
                                 timeoutSeconds));
    }
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::microseconds(200));
  }
}

double elapsedSeconds(cudaEvent_t start, cudaEvent_t end) {
  float ms = 0;
  FM_CHECK_CUDA(cudaEventElapsedTime(&ms, start, end));
  return static_cast<double>(ms) / 1e3;
}

}  // namespace fabricmap::worker::nccl
