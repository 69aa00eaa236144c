// One collective on host buffers through MPI calls.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>

#include "worker/backend.h"

namespace fabricmap::worker::mpi {

// The MPI datatype of an element type; throws for half and bfloat16, which MPI lacks.
MPI_Datatype mpiType(core::DType t);

// `input` and `output` hold at least the spec's element counts and outlive the runner.
std::unique_ptr<CollectiveRunner> makeCollective(MPI_Comm group, const CollectiveSpec& spec,
                                                 std::byte* input, std::byte* output);

}  // namespace fabricmap::worker::mpi
