// The training pattern's traffic on GPU buffers: NCCL calls, one stream and communicator per type.
#pragma once

#include <nccl.h>

#include <memory>
#include <vector>

#include "worker/backend.h"

namespace fabricmap::worker::nccl {

// `comms[i]` is the communicator over specs[i].group's ranks; the communicators outlive the
// runner, which owns its streams and buffers on the current device.
std::unique_ptr<TrafficRunner> makeTrafficRunner(const std::vector<TrafficSpec>& specs,
                                                 const std::vector<ncclComm_t>& comms, double timeoutSeconds);

}  // namespace fabricmap::worker::nccl
