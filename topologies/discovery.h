// Discovery of the local node's GPU topology: GPUs and NVLinks from NVML (loaded at run time),
// NUMA nodes, CPU lists, NICs and PCIe paths from sysfs. Works, and says what it could not learn,
// on machines without a GPU or driver.
#pragma once

#include <filesystem>
#include <string>

#include "topologies/gpu_topology.h"
#include "topologies/nvml.h"

namespace fabricmap::topologies {

struct DiscoveryOptions {
  std::filesystem::path sysfsRoot = "/sys";
  std::string nvmlLibrary = "libnvidia-ml.so.1";
};

// Loads NVML and discovers. Without NVML the result has no GPUs, the NICs sysfs shows, and a
// warning "NVML not available (...)" (plus the NVIDIA GPUs on the PCI bus it could not query).
GpuTopology discoverLocalNode(const DiscoveryOptions& options = {});

// Discovery with a given NVML (nullptr: none, `nvmlError` says why) and sysfs root; tests pass a
// fake NvmlApi and a fake sysfs tree. GPU indices are NVML's (PCI bus order, as nvidia-smi).
// NVLinks to an NVSwitch count for every pair of switch-attached GPUs as the smaller of the two
// GPUs' switch link counts, which is what `nvidia-smi topo -m` shows (NV18 on 8x H100).
GpuTopology discoverNode(NvmlApi* nvml, const std::string& nvmlError,
                         const std::filesystem::path& sysfsRoot);

}  // namespace fabricmap::topologies
