// Copies between the host buffers of two ranks on one node, through an MPI shared-memory window:
// the host-memory backend's counterpart of the GPU-pair copy matrix (what a rank on one socket
// reaches of a rank's memory on the other).
#pragma once

#include <mpi.h>

#include <memory>

#include "worker/backend.h"

namespace fabricmap::worker::mpi {

// Collective over `pair` (2 ranks). Null on both ranks when they cannot share memory.
std::unique_ptr<CopyRunner> makeCopyRunner(MPI_Comm pair, const CopySpec& spec);

}  // namespace fabricmap::worker::mpi
