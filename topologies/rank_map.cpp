// Rank-to-node mapping (see rank_map.h).
#include "topologies/rank_map.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace fabricmap::topologies {
namespace {

std::string classFromGpuCount(int gpus) {
  if (gpus == 0) return "NO_GPU";
  if (gpus == 1) return "SINGLE_GPU";
  return "UNCLASSIFIED";  // the GPU link graph is classified by GPU discovery
}

}  // namespace

core::Topology buildTopology(const std::vector<core::HostProbe>& probes, int ranksPerNode) {
  core::Topology topo;
  topo.emulated = ranksPerNode > 0;
  topo.ranksPerNode = ranksPerNode;
  const int n = static_cast<int>(probes.size());

  // node key of each rank, and node numbering by first appearance in rank order
  std::vector<int> key(probes.size());
  for (int r = 0; r < n; ++r) {
    key[r] = topo.emulated ? r / ranksPerNode
                           : (probes[r].sharedLeader >= 0 ? probes[r].sharedLeader : r);
  }
  std::map<int, int> nodeOfKey;
  for (int r = 0; r < n; ++r) {
    if (!nodeOfKey.contains(key[r])) {
      const int node = static_cast<int>(nodeOfKey.size());
      nodeOfKey.emplace(key[r], node);
      core::NodeRecord rec;
      rec.node = node;
      rec.hostname = probes[r].hostname;
      rec.name = topo.emulated ? fmt::format("{}/{}", probes[r].hostname, node)
                               : probes[r].hostname;
      rec.gpus = probes[r].gpuCount;
      rec.cpus = probes[r].cpus;
      rec.memAvailableBytes = probes[r].memAvailableBytes;
      rec.topologyClass = classFromGpuCount(rec.gpus);
      topo.nodes.push_back(rec);
    }
  }
  for (int r = 0; r < n; ++r) {
    core::RankRecord rec;
    rec.rank = r;
    rec.node = nodeOfKey.at(key[r]);
    rec.localRank = topo.nodes[rec.node].ranks++;
    rec.hostname = probes[r].hostname;
    rec.cpu = probes[r].cpu;
    rec.numaNode = probes[r].numaNode;
    topo.ranks.push_back(rec);
  }
  return topo;
}

}  // namespace fabricmap::topologies
