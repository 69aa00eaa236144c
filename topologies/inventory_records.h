// The node inventory (inventory.h) in the forms it travels in: JSON (`fabricmap inventory --json`,
// and from each node's first rank to rank 0 in a run) and the results file's rows
// (core::InventoryRows, /inventory/*), and back from those rows for the verdicts on a file.
#pragma once

#include <nlohmann/json.hpp>

#include "core/records.h"
#include "topologies/inventory.h"

namespace fabricmap::topologies {

// The documented JSON form (topologies/README.md); fromInventoryJson reads it back, taking what
// it finds (a missing or mistyped key leaves its field unknown).
nlohmann::ordered_json inventoryJson(const Inventory& inventory);
Inventory fromInventoryJson(const nlohmann::json& json);

// The rows of node `node` (its counters as read now, as both start and end).
core::InventoryRows inventoryRows(const Inventory& inventory, int node);
// Node `node`'s inventory from a file's rows; the ports' counters are those at the run's start.
Inventory inventoryOf(const core::InventoryRows& rows, int node);

// "IB" -> kInfiniBand, ..., anything else kUnknown; "yes"/"no" -> kYes/kNo, else kUnknown.
LinkLayer linkLayerOf(std::string_view name);
Tristate tristateOf(std::string_view name);

}  // namespace fabricmap::topologies
