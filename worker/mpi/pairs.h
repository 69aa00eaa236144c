// Point-to-point transfers between two ranks with MPI calls on host buffers.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>

#include "worker/backend.h"

namespace fabricmap::worker::mpi {

// `send` and `receive` hold at least spec.bytes and outlive the runner.
std::unique_ptr<PairRunner> makePairRunner(MPI_Comm world, const PairSpec& spec, std::byte* send,
                                           std::byte* receive);

}  // namespace fabricmap::worker::mpi
