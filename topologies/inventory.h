// What one node's hardware says about itself, from sysfs (the root is a parameter: /sys on a real
// node, a saved tree in tests and for triage): every RDMA port with its state, rate, width and
// error counters, Ethernet NICs without RDMA, the PCIe link of every GPU and NIC against what the
// slot and device can do, and whether GPUDirect RDMA can work. Plain data; the judgement is in
// orchestrator/analysis (inventory_rules). A value that cannot be read stays unknown (empty, 0 or
// -1) and `notes` says why; nothing is raised from it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topologies/gpu_topology.h"

namespace fabricmap::topologies {

// One port of an RDMA device: /class/infiniband/<device>/ports/<port>.
struct NicPort {
  std::string device;     // mlx5_0
  int port = 0;           // 1, 2, ...
  std::string state;      // ACTIVE, DOWN, INIT, ARMED (the kernel's "4: ACTIVE" without the number)
  std::string physState;  // LinkUp, Disabled, Polling, ... ("5: LinkUp")
  double rateGbps = 0;    // 400 from "400 Gb/sec (4X NDR)"; 0: unknown
  int width = 0;          // lanes: 4 from "4X"; 0: unknown
  std::string speed;      // NDR, HDR, EDR, ... from the same text; empty: not said
  LinkLayer linkLayer = LinkLayer::kUnknown;
  std::string netdev;     // the Ethernet or IPoIB interface of the device, when there is one
  std::string pciBusId;   // sysfs form; empty: unknown
  int numaNode = -1;
  // ports/<port>/counters/<name>: those of kInventoryCounters that could be read
  std::map<std::string, std::uint64_t> counters;

  bool active() const { return state == "ACTIVE"; }
  bool linkUp() const { return physState == "LinkUp"; }
};

// The error counters read from every port (the InfiniBand PortCounters a failing cable or port
// raises; mlx5 shows them for RoCE ports too).
inline constexpr std::string_view kInventoryCounters[] = {
    "symbol_error",          "link_error_recovery",        "link_downed",
    "port_rcv_errors",       "port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors",
    "port_xmit_discards",    "port_xmit_constraint_errors", "port_rcv_constraint_errors",
    "local_link_integrity_errors", "excessive_buffer_overrun_errors", "VL15_dropped"};

// A physical Ethernet interface with no RDMA device behind it: /class/net/<name>.
struct EthernetNic {
  std::string name;
  double rateGbps = 0;  // `speed` (Mb/s) / 1000; 0: unknown (the kernel says -1 while the link is down)
  std::string state;    // operstate: up, down, ...
  std::string pciBusId;
  int numaNode = -1;
};

// A GPU's or NIC's PCIe link: /bus/pci/devices/<busId>/{current,max}_link_{speed,width}.
struct PcieLink {
  std::string busId;
  std::string device;  // "GPU" for a GPU, else the NIC's name (mlx5_0, eth0)
  bool gpu = false;
  double speedGTs = 0;  // 32 from "32.0 GT/s PCIe"; 0: unknown
  double maxSpeedGTs = 0;
  int width = 0;  // lanes; 0: unknown
  int maxWidth = 0;
  // what the port above it (root port or switch port: its slot) can do; 0: unknown
  double slotMaxSpeedGTs = 0;
  int slotMaxWidth = 0;
  int numaNode = -1;
  std::string localCpus;  // local_cpulist: the CPUs near it ("0-55,112-167"); empty: unknown
};

// Whether GPUDirect RDMA can work, as the kernel shows it: a peer-memory module loaded
// (nvidia_peermem, or the older nv_peer_mem) means yes. Without one, NCCL can still use dma-buf
// (open GPU kernel modules, Linux 5.12+), which only the CUDA driver can confirm: `dmaBuf` says
// what is known of it. Not applicable on a node without both GPUs and RDMA ports.
struct GpuDirect {
  Tristate ready = Tristate::kUnknown;
  std::string how;  // "nvidia_peermem loaded", "no peer-memory module", "no GPU", ...
};

struct Inventory {
  std::vector<NicPort> ports;
  std::vector<EthernetNic> ethernet;
  std::vector<PcieLink> pcie;  // GPUs first (PCI order), then NICs
  int gpus = 0;                // NVIDIA GPUs on the PCI bus
  GpuDirect gpuDirect;
  std::vector<std::string> notes;  // what could not be read, and why
};

// The inventory of the node whose sysfs is at `sysfsRoot`.
Inventory readInventory(const std::filesystem::path& sysfsRoot);

// "400 Gb/sec (4X NDR)" -> width 4, speed "NDR"; nullopt without a "(<n>X <speed>)" part.
struct IbRateText {
  int width = 0;
  std::string speed;
};
std::optional<IbRateText> parseIbRateText(std::string_view text);
// "32.0 GT/s PCIe" -> 32, "2.5 GT/s" -> 2.5; nullopt for "Unknown" and the like.
std::optional<double> parsePcieSpeed(std::string_view text);
// "4: ACTIVE" -> "ACTIVE", "5: LinkUp" -> "LinkUp", "ACTIVE" -> "ACTIVE".
std::string portStateName(std::string_view text);

// A port's counters grown between two reads of the same node (the start and the end of a run):
// (device, port, counter, growth) for every counter that grew.
struct CounterGrowth {
  std::string device;
  int port = 0;
  std::string counter;
  std::uint64_t growth = 0;
};
std::vector<CounterGrowth> counterGrowth(const Inventory& before, const Inventory& after);

}  // namespace fabricmap::topologies
