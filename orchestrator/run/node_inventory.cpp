// The node inventory in a run (see node_inventory.h).
#include "orchestrator/run/node_inventory.h"

#include <mpi.h>

#include <algorithm>

#include "core/config.h"
#include "topologies/cuda_driver.h"
#include "topologies/inventory_records.h"
#include "worker/comm.h"
#include "worker/mpi_check.h"

namespace fabricmap::orchestrator {
namespace {

namespace topo = topologies;

// Collective: each node's first rank reads its inventory; rank 0 gets one per node (node order),
// the other ranks none. A node whose description does not arrive whole has an empty inventory.
std::vector<NodeInventory> gather(const core::Topology& topology, const std::string& sysfsRoot) {
  int rank = 0;
  FM_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  std::string mine;
  // a simulated host (the sim build) has no hardware: the simulating machine's is no node's
  if (!FABRICMAP_HAVE_SIM && topology.ranks.at(static_cast<std::size_t>(rank)).localRank == 0) {
    // names from sysfs are not always UTF-8
    mine = topo::inventoryJson(topo::readLocalInventory(sysfsRoot)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  const std::vector<std::string> all = worker::gatherStrings(MPI_COMM_WORLD, mine);
  std::vector<NodeInventory> out;
  if (rank != 0) return out;
  for (const core::NodeRecord& n : topology.nodes) out.push_back({{n.name, n.node}, {}});
  for (const core::RankRecord& r : topology.ranks) {
    if (r.localRank != 0 || r.node < 0 || r.node >= static_cast<int>(out.size())) continue;
    const auto json = nlohmann::json::parse(all.at(static_cast<std::size_t>(r.rank)), nullptr, false);
    if (!json.is_discarded()) out[static_cast<std::size_t>(r.node)].inventory = topo::fromInventoryJson(json);
  }
  return out;
}

}  // namespace

NodeInventories::NodeInventories(const core::Topology& topology, const std::string& sysfsRoot)
    : sysfsRoot_(sysfsRoot), nodes_(gather(topology, sysfsRoot)) {}

core::InventoryRows NodeInventories::rows() const {
  core::InventoryRows all;
  for (const NodeInventory& n : nodes_) {
    core::InventoryRows mine = topo::inventoryRows(n.inventory, n.at.index);
    all.nics.insert(all.nics.end(), mine.nics.begin(), mine.nics.end());
    all.pcie.insert(all.pcie.end(), mine.pcie.begin(), mine.pcie.end());
    all.nodes.insert(all.nodes.end(), mine.nodes.begin(), mine.nodes.end());
  }
  return all;
}

std::vector<core::Finding> NodeInventories::findings(const core::Topology& topology) const {
  std::vector<core::Finding> out;
  for (const NodeInventory& n : nodes_) {
    const std::vector<core::Finding> mine = inventoryFindings(n.inventory, n.at);
    out.insert(out.end(), mine.begin(), mine.end());
  }
  const std::vector<core::Finding> across = crossNodeRateFindings(nodes_);
  out.insert(out.end(), across.begin(), across.end());
  const std::vector<core::Finding> memory = gpuMemoryFindings(topology);
  out.insert(out.end(), memory.begin(), memory.end());
  const std::vector<core::Finding> health = gpuHealthFindings(topology);
  out.insert(out.end(), health.begin(), health.end());
  const std::vector<core::Finding> binding = bindingFindings(topology);
  out.insert(out.end(), binding.begin(), binding.end());
  return out;
}

NodeInventories::End NodeInventories::readEnd(const core::Topology& topology) const {
  const std::vector<NodeInventory> now = gather(topology, sysfsRoot_);
  End end;
  for (std::size_t i = 0; i < now.size() && i < nodes_.size(); ++i) {
    const NodeInventory& was = nodes_[i];
    for (const topo::NicPort& p : now[i].inventory.ports) {
      for (const auto& [counter, value] : p.counters) {
        const auto before = std::find_if(was.inventory.ports.begin(), was.inventory.ports.end(),
                                         [&](const topo::NicPort& q) { return q.device == p.device && q.port == p.port; });
        if (before == was.inventory.ports.end() || before->counters.count(counter) == 0) continue;
        end.counters.push_back({was.at.index, p.device, p.port, counter, before->counters.at(counter), value});
      }
    }
    const std::vector<core::Finding> grown = linkErrorFindings(was.inventory, now[i].inventory, was.at);
    end.findings.insert(end.findings.end(), grown.begin(), grown.end());
  }
  return end;
}

}  // namespace fabricmap::orchestrator
