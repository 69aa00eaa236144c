// What the CUDA driver says about GPUDirect RDMA through dma-buf, the path NCCL takes when no
// peer-memory module is loaded (open GPU kernel modules, Linux 5.12 or later): it asks
// cuDeviceGetAttribute(CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED) of each GPU. libcuda is loaded at run
// time, as NVML is (nvml.h), so the project builds and runs where no driver exists.
#pragma once

#include <string>
#include <string_view>

#include "topologies/gpu_topology.h"
#include "topologies/inventory.h"

namespace fabricmap::topologies {

struct DmaBufSupport {
  Tristate supported = Tristate::kUnknown;  // yes: every GPU supports it; no: one does not
  std::string how;                          // what the driver said, or why it could not be asked
};

// dlopen()s `library`, calls cuInit and asks every GPU. The library stays loaded (unloading the
// CUDA driver under a process that uses CUDA is not safe).
DmaBufSupport askCudaDriver(const std::string& library = "libcuda.so.1");

// The kernel release ("6.8.0-45-generic") supports dma-buf for RDMA: 5.12 or later; false when it
// cannot be read as a version.
bool kernelHasRdmaDmaBuf(std::string_view release);

// Where sysfs found no peer-memory module, the driver's and the kernel's answer decides: dma-buf
// supported on every GPU under a 5.12+ kernel is GPUDirect RDMA (yes); the driver's no, or an
// older kernel, stays no with the reason; an unknown answer leaves the verdict as it was.
GpuDirect withDmaBuf(const GpuDirect& sysfs, const DmaBufSupport& driver, std::string_view kernelRelease);

// readInventory of this machine: when `sysfsRoot` is the live /sys and no peer-memory module is
// loaded, the CUDA driver and the running kernel are asked about dma-buf too (a saved tree is not
// this machine: its verdict stays the tree's).
Inventory readLocalInventory(const std::string& sysfsRoot);

}  // namespace fabricmap::topologies
