// What Linux sysfs says about PCI devices and NICs, under a root directory that is /sys on a real
// node and a fake tree in tests.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topologies/gpu_topology.h"

namespace fabricmap::topologies {

// Where a PCI device sits: its root complex ("pci0000:17") and the chain of PCI functions from
// the root port down to the device itself ("0000:17:00.0", ..., "0000:1b:00.0").
struct PciLocation {
  std::string rootComplex;
  std::vector<std::string> chain;
  int numaNode = -1;
};

// The sysfs form of a PCI address: lower case, 4-digit domain ("00000000:1B:00.0" from NVML
// becomes "0000:1b:00.0").
std::string sysfsBusId(std::string_view busId);

// The device's place in the PCI tree, from the link /bus/pci/devices/<busId> resolves to;
// nullopt when sysfs does not have it.
std::optional<PciLocation> pciLocation(const std::filesystem::path& sysfsRoot,
                                       const std::string& busId);

// The `nvidia-smi topo -m` path between two PCI devices: SYS across NUMA nodes, NODE between root
// complexes of one NUMA node (or of unknown NUMA nodes), PHB when they meet only at the root
// complex, PIX when each is at most one bridge below the deepest bridge they share (one PCIe
// switch), PXB when more (a switch hierarchy).
LinkKind pciPath(const PciLocation& a, const PciLocation& b);

// A sysfs attribute's first line, trimmed; nullopt when it cannot be read.
std::optional<std::string> readAttribute(const std::filesystem::path& file);
// An attribute holding one integer; `fallback` when unreadable or not an integer.
int readInt(const std::filesystem::path& file, int fallback);
// A directory's entries, sorted by name; empty when it cannot be read.
std::vector<std::filesystem::path> sortedEntries(const std::filesystem::path& dir);
// The PCI function a class device (/class/net/X/device, /class/infiniband/Y/device) belongs to;
// empty when none.
std::string pciFunctionOf(const std::filesystem::path& deviceLink);
// An RDMA port directory's number (ports/2 -> 2); 0 when not a number.
int portNumber(const std::filesystem::path& port);

// /bus/pci/devices/<busId>/local_cpulist ("0-47,96-143"); empty when unknown.
std::string pciLocalCpus(const std::filesystem::path& sysfsRoot, const std::string& busId);

// RDMA devices (/class/infiniband: rate, link layer, state of the first active port) and
// physical Ethernet interfaces (/class/net, except those behind an RDMA device and IPoIB).
std::vector<NicInfo> scanNics(const std::filesystem::path& sysfsRoot);

// "400 Gb/sec (4X NDR)" -> 400; nullopt for text without a leading number.
std::optional<double> parseIbRate(std::string_view text);
// "InfiniBand" -> kInfiniBand, "Ethernet" -> kRoce (an RDMA port over Ethernet), else kUnknown.
LinkLayer parseIbLinkLayer(std::string_view text);

// Bus ids of NVIDIA display/3D controllers on the PCI bus (vendor 0x10de, class 0x03xxxx), sorted:
// GPUs the hardware has, whether or not a driver serves them.
std::vector<std::string> nvidiaPciGpus(const std::filesystem::path& sysfsRoot);

}  // namespace fabricmap::topologies
