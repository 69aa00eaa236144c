// Rank-to-node mapping (see rank_map.h).
#include "topologies/rank_map.h"

#include <algorithm>
#include <bit>
#include <map>
#include <string>

#include <fmt/format.h>

#include "core/units.h"

namespace fabricmap::topologies {
namespace {

std::string classFromGpuCount(int gpus) {
  if (gpus == 0) return "NO_GPU";
  if (gpus == 1) return "SINGLE_GPU";
  return "UNCLASSIFIED";  // the GPU link graph is classified by GPU discovery
}

// Per host, the CPUs available to its ranks: the union of their affinity masks (bound ranks each
// see one core; together they see the host's share), else the largest single count. One pass over
// the probes: a pass per node would be quadratic in the ranks.
std::map<std::string, int> cpusPerHost(const std::vector<core::HostProbe>& probes) {
  std::map<std::string, std::pair<std::vector<std::uint64_t>, int>> hosts;  // union of masks, largest count
  for (const auto& p : probes) {
    auto& [all, largest] = hosts[p.hostname];
    largest = std::max(largest, p.cpus);
    if (all.size() < p.cpuMask.size()) all.resize(p.cpuMask.size(), 0);
    for (std::size_t w = 0; w < p.cpuMask.size(); ++w) all[w] |= p.cpuMask[w];
  }
  std::map<std::string, int> out;
  for (const auto& [host, use] : hosts) {
    int count = 0;
    for (std::uint64_t w : use.first) count += std::popcount(w);
    out[host] = count > 0 ? count : use.second;
  }
  return out;
}

// A CPU mask (64 CPUs a word) as the kernel's cpulist: "0-7,64-71"; empty when unknown.
std::string cpuList(const std::vector<std::uint64_t>& mask) {
  std::vector<int> cpus;
  for (std::size_t w = 0; w < mask.size(); ++w) {
    for (int b = 0; b < 64; ++b) {
      if ((mask[w] >> b) & 1U) cpus.push_back(static_cast<int>(w) * 64 + b);
    }
  }
  return core::formatRanks(cpus);
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
  const std::map<std::string, int> cpus = cpusPerHost(probes);
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
      rec.cpus = cpus.at(probes[r].hostname);
      rec.memAvailableBytes = probes[r].memAvailableBytes;
      rec.bootId = probes[r].bootId;
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
    rec.cpus = cpuList(probes[r].cpuMask);
    topo.ranks.push_back(rec);
  }
  return topo;
}

}  // namespace fabricmap::topologies
