// Point-to-point transfers between two ranks' GPUs with ncclSend/ncclRecv.
#pragma once

#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include <cstddef>
#include <memory>

#include "worker/backend.h"

namespace fabricmap::worker::nccl {

// `comm` spans `world`; `send` and `receive` are device memory of at least spec.bytes.
std::unique_ptr<PairRunner> makePairRunner(MPI_Comm world, ncclComm_t comm, cudaStream_t stream,
                                           const PairSpec& spec, std::byte* send, std::byte* receive,
                                           double timeoutSeconds);

}  // namespace fabricmap::worker::nccl
