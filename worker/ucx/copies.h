// The ucx backend's copies inside a node: none yet. UCP moves node-local pairs through its shared-
// memory transports in the pairwise matrices; the GPU-pair copy matrix belongs to the nccl backend.
#pragma once

#include <vector>

#include "core/plan.h"

namespace fabricmap::worker::ucx {

std::vector<core::CopyMethod> copyMethods();

}  // namespace fabricmap::worker::ucx
