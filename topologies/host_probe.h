// What a rank can learn about its host without talking to anyone.
#pragma once

#include "core/records.h"

namespace fabricmap::topologies {

// Hostname, current CPU and NUMA node, and the GPUs the NVIDIA driver exposes
// (/proc/driver/nvidia/gpus; 0 without a driver), available memory (/proc/meminfo), the kernel's
// boot id (/proc/sys/kernel/random/boot_id). sharedLeader is left for the bootstrap, the
// hostname replaced there by MPI's processor name. In the sim build only the tool is known.
core::HostProbe probeHost();

}  // namespace fabricmap::topologies
