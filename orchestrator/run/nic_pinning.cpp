// NIC pinning (see nic_pinning.h).
#include "orchestrator/run/nic_pinning.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "topologies/classify.h"
#include "topologies/discovery.h"
#include "topologies/inventory.h"
#include "topologies/inventory_records.h"
#include "worker/comm.h"
#include "worker/mpi_check.h"

namespace fabricmap::orchestrator {
namespace {

std::vector<const core::NicRecord*> nicsOf(const core::Topology& topology, int node) {
  std::vector<const core::NicRecord*> nics;
  for (const core::NicRecord& n : topology.inventory.nics) {
    if (n.node == node) nics.push_back(&n);
  }
  std::sort(nics.begin(), nics.end(),
            [](const auto* a, const auto* b) { return std::tie(a->device, a->port) < std::tie(b->device, b->port); });
  return nics;
}

NicChoice choiceOf(const core::NicRecord& n) { return {n.device, n.kind == "rdma" ? n.port : 0}; }

// The rank's GPU's nearest NIC, at its first active port (port 1 when the inventory does not say).
NicChoice nearestToGpu(const core::RankRecord& rank, const std::vector<const core::NicRecord*>& nics) {
  for (const core::NicRecord* n : nics) {
    if (n->device == rank.nic && n->activeRdma()) return choiceOf(*n);
  }
  for (const core::NicRecord* n : nics) {
    if (n->device == rank.nic) return choiceOf(*n);
  }
  return {rank.nic, 1};
}

NicChoice automatic(const core::RankRecord& rank, const std::vector<const core::NicRecord*>& nics) {
  if (!rank.nic.empty()) return nearestToGpu(rank, nics);
  std::vector<const core::NicRecord*> usable;
  for (const core::NicRecord* n : nics) {
    if (n->activeRdma()) usable.push_back(n);
  }
  if (usable.empty()) {
    for (const core::NicRecord* n : nics) {
      if (n->kind == "ethernet" && n->state == "up") usable.push_back(n);
    }
  }
  if (usable.empty()) return {};
  return choiceOf(*usable[static_cast<std::size_t>(rank.localRank) % usable.size()]);
}

// "mlx5_0:1" or "eth0"; a bad entry is a UsageError.
NicChoice parseEntry(const std::string& entry) {
  const std::size_t colon = entry.find(':');
  NicChoice c{entry.substr(0, colon), 0};
  bool ok = !c.device.empty() && c.device.find_first_of(" \t=") == std::string::npos;
  if (colon != std::string::npos) {
    const std::string port = entry.substr(colon + 1);
    ok = ok && !port.empty() && port.size() <= 3 && port.find_first_not_of("0123456789") == std::string::npos;
    if (ok) c.port = std::stoi(port);
    ok = ok && c.port > 0;
  }
  if (!ok) throw core::UsageError(fmt::format("--nic-per-rank: '{}' is not a NIC (mlx5_0:1, mlx5_0 or eth0)", entry));
  return c;
}

std::vector<NicChoice> parseList(const std::string& mode) {
  std::vector<NicChoice> list;
  std::stringstream in(mode);
  for (std::string entry; std::getline(in, entry, ',');) list.push_back(parseEntry(entry));
  if (list.empty()) throw core::UsageError("--nic-per-rank needs auto or a list of NICs");
  return list;
}

// A listed NIC as the node has it: a device named without a port at its first active port (else
// its first); one the node's inventory does not have (when it has one) is refused.
NicChoice onNode(const NicChoice& c, const core::Topology& topology, int node,
                 const std::vector<const core::NicRecord*>& nics) {
  if (nics.empty()) return c;  // nothing known of this node's NICs: trust the list
  const core::NicRecord* found = nullptr;
  for (const core::NicRecord* n : nics) {
    if (n->device != c.device || (c.port != 0 && n->port != c.port)) continue;
    if (found == nullptr || (n->activeRdma() && !found->activeRdma())) found = n;
  }
  if (found != nullptr) return choiceOf(*found);
  std::vector<std::string> names;
  for (const core::NicRecord* n : nics) names.push_back(choiceOf(*n).name());
  throw core::UsageError(fmt::format("--nic-per-rank: node {} ({}) has no NIC {} (it has {})", node,
                                     topology.nodes.at(static_cast<std::size_t>(node)).name, c.name(),
                                     fmt::join(names, ", ")));
}

}  // namespace

std::vector<NicChoice> pinNics(const core::Topology& topology, const std::string& mode) {
  std::vector<NicChoice> out;
  if (mode.empty()) return std::vector<NicChoice>(topology.ranks.size());
  const std::vector<NicChoice> list = mode == "auto" ? std::vector<NicChoice>{} : parseList(mode);
  for (const core::RankRecord& r : topology.ranks) {
    const std::vector<const core::NicRecord*> nics = nicsOf(topology, r.node);
    if (list.empty()) {
      out.push_back(automatic(r, nics));
      continue;
    }
    out.push_back(onNode(list[static_cast<std::size_t>(r.localRank) % list.size()], topology, r.node, nics));
  }
  return out;
}

namespace {

// The launcher's index of this process among its node's, before MPI can say; -1 when none does.
int launcherLocalRank() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0' && std::string(value).find_first_not_of("0123456789") == std::string::npos &&
        std::string(value).size() < 7) {
      return std::stoi(value);
    }
  }
  return -1;
}

// This node as pinNics reads a topology: one rank (this process) and the node's NICs.
core::Topology thisNode(int localRank, const std::string& sysfsRoot, int gpusPerNode) {
  topologies::DiscoveryOptions options;
  options.sysfsRoot = sysfsRoot;
  const topologies::GpuTopology gpus = topologies::discoverLocalNode(options);
  core::Topology node;
  core::RankRecord me;
  me.localRank = localRank;
  if (gpus.gpuCount() > 0) {
    const int spread = gpusPerNode > 0 ? std::min(gpusPerNode, gpus.gpuCount()) : gpus.gpuCount();
    const topologies::NearestNic nearest = topologies::nearestNic(gpus, localRank % spread);
    if (nearest.nic >= 0) me.nic = gpus.nics[static_cast<std::size_t>(nearest.nic)].name;
  }
  node.ranks.push_back(me);
  node.nodes.resize(1);
  node.inventory = topologies::inventoryRows(topologies::readInventory(sysfsRoot), 0);
  return node;
}

}  // namespace

NicChoice pinBeforeMpiInit(const std::string& mode, const std::string& sysfsRoot, int gpusPerNode) {
  const int localRank = launcherLocalRank();
  if (mode.empty() || localRank < 0) return {};
  const core::Topology node = thisNode(localRank, sysfsRoot, gpusPerNode);
  NicChoice pinned;
  try {
    pinned = pinNics(node, mode).front();
  } catch (const core::UsageError&) {
    return {};  // every rank refuses it together after MPI_Init
  }
  if (pinned.empty()) return pinned;
  setenv("UCX_NET_DEVICES", pinned.name().c_str(), 1);
  for (const core::NicRecord& n : node.inventory.nics) {
    if (n.device != pinned.device) continue;
    const std::string interface = n.kind == "ethernet" ? n.device : n.netdev;
    if (!interface.empty()) setenv("OMPI_MCA_btl_tcp_if_include", interface.c_str(), 1);
    break;
  }
  return pinned;
}

std::vector<NicChoice> agreedNics(MPI_Comm world, const core::Topology& topology, const std::string& mode) {
  if (mode.empty()) return {};
  int rank = 0;
  FM_MPI(MPI_Comm_rank(world, &rank));
  std::string table;  // rank 0: "device port" per rank, or "!" and the refusal
  if (rank == 0) {
    try {
      for (const NicChoice& c : pinNics(topology, mode)) table += fmt::format("{} {}\n", c.device, c.port);
    } catch (const core::UsageError& e) {
      table = std::string("!") + e.what();
    }
  }
  table = worker::broadcastString(world, table);
  if (table.starts_with('!')) throw core::UsageError(table.substr(1));
  std::vector<NicChoice> all;
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t space = line.rfind(' ');
    all.push_back({line.substr(0, space), std::stoi(line.substr(space + 1))});
  }
  return all;
}

}  // namespace fabricmap::orchestrator
