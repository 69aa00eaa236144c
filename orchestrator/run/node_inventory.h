// The node inventory in a run: each node's first rank reads its sysfs (topologies/inventory.h) at
// the start and again at the end; rank 0 records the rows (/inventory/*), judges them with the
// inventory rules, and records the error counters that grew meanwhile.
#pragma once

#include <string>
#include <vector>

#include "core/records.h"
#include "orchestrator/analysis/inventory_rules.h"

namespace fabricmap::orchestrator {

class NodeInventories {
 public:
  // Collective. Rank 0 keeps every node's inventory; the other ranks keep nothing.
  NodeInventories(const core::Topology& topology, const std::string& sysfsRoot);

  // Rank 0: the rows for the results file (the counters come at the end).
  core::InventoryRows rows() const;
  // Rank 0: the inventory rules on every node, the rates across nodes, the GPUs' memory (size and health) and the
  // ranks' binding (the topology must hold the inventory's rows).
  std::vector<core::Finding> findings(const core::Topology& topology) const;

  // What the end of the run adds: every counter at the start and now, and what grew.
  struct End {
    std::vector<core::CounterRecord> counters;
    std::vector<core::Finding> findings;  // link_errors
  };
  // Collective: the counters read again. Rank 0 gets them; the others an empty End.
  End readEnd(const core::Topology& topology) const;

 private:
  std::string sysfsRoot_;
  std::vector<NodeInventory> nodes_;  // rank 0: one per node, in node order
};

}  // namespace fabricmap::orchestrator
