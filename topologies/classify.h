// Judges one node's GPU topology: its class (shared/DESIGN.md "Topology classes"), whether an
// NVSwitch is there, each GPU's nearest NIC and whether GPUDirect RDMA can reach it without the
// CPU.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topologies/gpu_topology.h"
#include "topologies/specs.h"

namespace fabricmap::topologies {

enum class TopologyClass : std::uint8_t {
  kFullNvSwitch,       // every pair NVLink, a switch present
  kNvLinkDirectMesh,   // every pair NVLink, 3+ GPUs, no switch
  kNvLinkPairs,        // NVLink only inside disjoint cliques (bridged pairs), PCIe elsewhere
  kNvLinkPartialMesh,  // NVLink graph neither complete nor disjoint cliques (DGX-1), or a
                       // switched node with some GPUs' NVLinks missing
  kPcieOnly,
  kSingleGpu,
  kNoGpu,
};

// "FULL_NVSWITCH", "NVLINK_DIRECT_MESH", ...: the names in results files and JSON.
std::string_view className(TopologyClass c);
std::optional<TopologyClass> classFromName(std::string_view name);

struct NearestNic {
  int gpu = 0;
  int nic = -1;  // index into GpuTopology::nics; -1: no (RDMA) NIC on the node
  LinkKind path = LinkKind::kUnknown;
  // PIX or PXB: GPUDirect RDMA stays under a PCIe switch. PHB/NODE/SYS cross the CPU, which caps
  // the NIC's bandwidth and is why NCCL disables GPUDirect RDMA there by default.
  bool gpuDirect = false;
};

struct Classification {
  TopologyClass topologyClass = TopologyClass::kNoGpu;
  Tristate nvswitch = Tristate::kUnknown;  // the conclusion, from NVML or from link counts
  std::string nvswitchEvidence;            // why nvswitch is what it is ("NVML reports ...")
  // An NVSwitch node that is not a full mesh, or whose GPUs show unequal link counts: links down.
  bool degraded = false;
  int linkBound = kMaxNvLinksPerGpu;  // NVLinks per GPU assumed when summing per-pair counts
  std::vector<std::vector<int>> nvlinkGroups;  // connected components of the NVLink graph (2+ GPUs)
  std::vector<NearestNic> nearestNics;         // one per GPU, in GPU order
  std::string summary;                         // one line: why this class
  std::vector<std::string> warnings;           // the topology's own warnings first, then ours
};

// Pure: the same topology gives the same classification. The switch bound is the GPUs' NVLink
// count from specs.h when every GPU's name is known, else kMaxNvLinksPerGpu (18).
Classification classify(const GpuTopology& topo);

// The best NIC for `gpu` by PCIe path (then higher rate, then lower index) among the node's RDMA
// NICs; nic -1 when it has none, or when no RDMA NIC's path from this GPU is known.
NearestNic nearestNic(const GpuTopology& topo, int gpu);

}  // namespace fabricmap::topologies
