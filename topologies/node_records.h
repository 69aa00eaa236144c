// From a node's discovered GPU topology to the run's records: the node's class, NICs, NVSwitch
// verdict and GPU link codes, and each of its ranks' GPU (matched by PCI bus id) and nearest NIC.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "core/records.h"
#include "topologies/classify.h"
#include "topologies/gpu_topology.h"

namespace fabricmap::topologies {

// What the first rank of a node sends rank 0: `fabricmap topo --json`'s object for the node.
nlohmann::ordered_json describeNode(const GpuTopology& topo, const Classification& classification);

// Fills node `node` of `topology` from its description, and the GPU fields of its ranks from
// `rankBusIds` (by world rank; the PCI bus id of the GPU the rank's backend uses, empty when it
// uses none). When discovery found no GPU but the driver lists some (`NodeRecord::gpus` > 0 from
// the host probe), the class is UNCLASSIFIED: the GPUs are there, their links unknown. Every GPU
// of the node becomes a row of `topology.inventory.gpus` (gpuInventoryRows).
void applyNodeDescription(core::Topology& topology, int node, const nlohmann::json& description,
                          const std::vector<std::string>& rankBusIds);

// The node's GPUs from its description: index, bus id, name, memory, NUMA node, nearest NIC and
// the health of its memory (memory_health).
std::vector<core::GpuInventoryRecord> gpuInventoryRows(const nlohmann::json& description, int node);

// "0000:3B:00.0" and "00000000:3b:00.0" (NVML's form) -> "0000:3b:00.0".
std::string normalizeBusId(std::string_view busId);

}  // namespace fabricmap::topologies
