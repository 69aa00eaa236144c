// CUDA and NCCL helpers private to the NCCL backend: checked NCCL calls, owned streams, and the
// one way this backend waits for the GPU (polling with a deadline and NCCL's asynchronous error,
// aborting the communicator rather than hanging). Device memory: worker/device_buffer.h.
#pragma once

#include <nccl.h>

#include <cstddef>
#include <string>

#include "core/error.h"
#include "core/types.h"
#include "worker/device_buffer.h"  // FM_CHECK_CUDA, DeviceBuffer

// Checked NCCL calls: a failure becomes a RuntimeFault naming the call and file:line.
#define FM_CHECK_NCCL(expr)                                                                   \
  do {                                                                                        \
    const ncclResult_t fm_res_ = (expr);                                                      \
    if (fm_res_ != ncclSuccess) throw FM_FAULT(std::string("NCCL: ") + #expr + ": " +         \
                                               ncclGetErrorString(fm_res_));                  \
  } while (0)

namespace fabricmap::worker::nccl {

ncclDataType_t ncclType(core::DType t);
ncclRedOp_t ncclOp(core::RedOp op);

class Stream {
 public:
  Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// Waits until `stream` has finished, polling it. Every poll also asks NCCL for an asynchronous
// error on `comm`; on such an error, or when `timeoutSeconds` pass, the communicator is aborted
// (so no rank stays stuck in it) and a RuntimeFault names what happened. `what` says which step.
void waitStream(cudaStream_t stream, ncclComm_t comm, double timeoutSeconds, const std::string& what);

// Seconds between two recorded events.
double elapsedSeconds(cudaEvent_t start, cudaEvent_t end);

}  // namespace fabricmap::worker::nccl
