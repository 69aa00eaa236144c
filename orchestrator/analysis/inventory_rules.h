// The judgement of one node's hardware inventory (topologies/inventory.h): an ordered list of
// small named rules, each a function of the inventory that adds its findings. Direct evidence:
// every finding has confidence 1. A value the inventory could not read raises nothing.
#pragma once

#include <string>
#include <vector>

#include "core/records.h"
#include "orchestrator/analysis/analysis.h"
#include "topologies/inventory.h"

namespace fabricmap::orchestrator {

// Where the findings point: the node's name and index (core::Finding::nodeA; -1 outside a run).
struct InventorySubject {
  std::string node;
  int index = -1;
};

// A finding of `kind` on `what` of that node (subject "<node>: <what>"); direct evidence, confidence 1.
core::Finding inventoryFinding(core::FindingKind kind, core::Severity severity, const InventorySubject& at,
                               const std::string& what);

// The rules, in the order inventoryFindings runs them (name and what each names).
const std::vector<AnalysisRule>& inventoryRules();

// nic_down, nic_rate_mismatch, pcie_downtrained, no_gpudirect for one node.
std::vector<core::Finding> inventoryFindings(const topologies::Inventory& inventory, const InventorySubject& at);

// One node's inventory, as a run reads it.
struct NodeInventory {
  InventorySubject at;
  topologies::Inventory inventory;
};

// nic_rate_mismatch across nodes: a node whose active ports of a link layer usually run slower
// than most nodes' (every node equally slow within itself, which inventoryFindings cannot see).
std::vector<core::Finding> crossNodeRateFindings(const std::vector<NodeInventory>& nodes);

// gpu_memory: a GPU with under 0.9 x the memory of the largest GPU of its model in the run (an
// "A100-SXM4-40GB" among "-80GB" ones: one model), or below `minimumGiB` (0: no minimum).
std::vector<core::Finding> gpuMemoryFindings(const core::Topology& topology, double minimumGiB = 0);

// gpu_memory from NVML's view of each GPU's memory (/inventory/gpus), one finding per GPU at its
// worst: a failed row remap (error: replace it); a remap or page retirement waiting for a reset,
// pages retired for double-bit errors, ECC off (warning); rows remapped or pages retired for
// repaired errors (information).
std::vector<core::Finding> gpuHealthFindings(const core::Topology& topology);

// binding: a rank whose allowed CPUs (/topology/ranks cpus) lie away from its GPU's (the GPU's
// local_cpulist in /inventory/pcie): none of them near it, warning; some, information (an unbound
// rank the scheduler may move to the far socket); near its GPU but none near its NIC (the two on
// different sockets), information. Ranks or GPUs whose CPUs are unknown: nothing.
std::vector<core::Finding> bindingFindings(const core::Topology& topology);
// What binding judges: each rank whose CPUs and GPU's CPUs are both known, and how many of its
// CPUs are near its GPU and its NIC (verify's numa_binding takes it too).
struct RankBinding {
  const core::RankRecord* rank = nullptr;
  const core::PcieRecord* gpu = nullptr;
  const core::PcieRecord* nic = nullptr;  // its NIC's PCIe record; null when unknown
  std::size_t cpus = 0;     // CPUs it may run on
  std::size_t near = 0;     // of them near its GPU
  std::size_t nearNic = 0;  // of them near its NIC (0 without one)
};
std::vector<RankBinding> rankBindings(const core::Topology& topology);
// Sets each rank's near_gpu and near_nic ("yes", "partly", "no"; empty where unknown) from its
// binding: what /topology/ranks records.
void recordBindings(core::Topology& topology);

// link_errors: the error counters that grew between two reads of one node's inventory.
std::vector<core::Finding> linkErrorFindings(const topologies::Inventory& before, const topologies::Inventory& after,
                                             const InventorySubject& at);

}  // namespace fabricmap::orchestrator
