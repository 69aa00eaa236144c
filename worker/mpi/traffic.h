// The training pattern's traffic on host buffers: non-blocking MPI calls, one group per type.
#pragma once

#include <memory>
#include <vector>

#include "worker/backend.h"

namespace fabricmap::worker::mpi {

std::unique_ptr<TrafficRunner> makeTrafficRunner(const std::vector<TrafficSpec>& specs);

}  // namespace fabricmap::worker::mpi
