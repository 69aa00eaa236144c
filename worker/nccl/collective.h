// One collective on GPU buffers through NCCL calls.
#pragma once

#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include <cstddef>
#include <memory>

#include "worker/backend.h"

namespace fabricmap::worker::nccl {

// Enqueues one op of the table on `stream` (nccl-tests' calls): `count` elements per block
// (OpShape::block); alltoall's blocks lie one after the other in `send` and `recv`; sendrecv
// sends to group rank + 1 and receives from rank - 1, around the ring.
void enqueueOp(core::Op op, const std::byte* send, std::byte* recv, std::size_t count, core::DType dtype,
               ncclRedOp_t redop, int root, int rank, int n, ncclComm_t comm, cudaStream_t stream);

// `input` and `output` are device memory holding at least the spec's element counts; they, the
// communicator (over `group`'s ranks) and the stream outlive the runner. With `cudaGraph` the
// timed iterations are captured into a CUDA graph once and launched as one (nccl-tests' -G).
std::unique_ptr<CollectiveRunner> makeCollective(MPI_Comm group, ncclComm_t comm, cudaStream_t stream,
                                                 const CollectiveSpec& spec, std::byte* input,
                                                 std::byte* output, double timeoutSeconds, bool cudaGraph);

}  // namespace fabricmap::worker::nccl
