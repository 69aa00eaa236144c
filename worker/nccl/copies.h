// GPU-pair copies between the devices of two ranks on one node: copy engine and SM kernel, write
// and read, over a CUDA IPC peer mapping, or staged through pinned host memory where the GPUs
// cannot map each other's memory.
#pragma once

#include <mpi.h>

#include <memory>

#include "worker/backend.h"

namespace fabricmap::worker::nccl {

// Collective over `pair` (2 ranks, same node); null on both when they cannot share host memory. `device` is this rank's current CUDA device.
std::unique_ptr<CopyRunner> makeCopyRunner(MPI_Comm pair, const CopySpec& spec, int device,
                                           double timeoutSeconds);

}  // namespace fabricmap::worker::nccl
