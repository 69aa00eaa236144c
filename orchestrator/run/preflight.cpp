// The preflight checks (see preflight.h).
#include "orchestrator/run/preflight.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/units.h"
#include "worker/backends.h"

namespace fabricmap::orchestrator {
namespace {

// world ranks of each node, and the GPUs each of its ranks sees
std::vector<std::vector<int>> ranksByNode(const core::Topology& topology) {
  std::vector<std::vector<int>> nodes(topology.nodes.size());
  for (const auto& r : topology.ranks) nodes.at(static_cast<std::size_t>(r.node)).push_back(r.rank);
  return nodes;
}

std::string hostsOf(const std::vector<int>& ranks, const core::Topology& topology) {
  std::set<std::string> hosts;
  for (int r : ranks) hosts.insert(topology.ranks.at(static_cast<std::size_t>(r)).hostname);
  std::string out;
  for (const auto& h : hosts) out += (out.empty() ? "" : ", ") + h;
  return out;
}

}  // namespace

std::vector<std::string> versionProblems(const std::vector<core::HostProbe>& probes, const core::Topology& topology) {
  if (probes.empty()) return {};
  std::map<std::string, std::vector<int>> builds;
  for (std::size_t r = 0; r < probes.size(); ++r) builds[probes[r].tool].push_back(static_cast<int>(r));
  std::vector<std::string> problems;
  for (const auto& [tool, ranks] : builds) {
    if (tool == probes.front().tool) continue;
    problems.push_back(fmt::format("rank(s) {} on {} run {}, rank 0 runs {}: install the same build on every node",
                                   core::formatRanks(ranks), hostsOf(ranks, topology),
                                   tool.empty() ? "an unknown build" : tool, probes.front().tool));
  }
  return problems;
}

std::vector<std::string> gpuProblems(const std::vector<core::HostProbe>& probes, const core::Topology& topology,
                                     const RunConfig& config, std::string_view backend) {
  const worker::BackendInfo* info = worker::findBackend(backend);
  const bool gpuPerRank =
      (info != nullptr && info->memory == worker::MemoryKind::kCuda) || config.pairMemory == PairMemory::kCuda;
  std::vector<std::string> problems;
  const auto nodes = ranksByNode(topology);
  std::vector<int> seen(nodes.size(), 0);  // GPUs per node (its first rank's view)
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    if (nodes[n].empty()) continue;
    const core::NodeRecord& node = topology.nodes[n];
    std::map<int, std::vector<int>> counts;  // GPUs seen -> ranks
    for (int r : nodes[n]) counts[probes.at(static_cast<std::size_t>(r)).visibleGpus].push_back(r);
    seen[n] = counts.begin()->first;
    if (counts.size() > 1) {
      std::string views;
      for (const auto& [gpus, ranks] : counts) views += fmt::format("{}ranks {} see {}", views.empty() ? "" : ", ", core::formatRanks(ranks), gpus);
      problems.push_back(fmt::format("{}: its ranks see different numbers of GPUs ({}): check CUDA_VISIBLE_DEVICES "
                                     "in the launcher's environment", node.name, views));
    }
    const int ranks = static_cast<int>(nodes[n].size());
    if (config.gpusPerNode > 0 && seen[n] < config.gpusPerNode) {
      problems.push_back(fmt::format("{} sees {} GPU(s), --gpus-per-node asks for {}", node.name, seen[n], config.gpusPerNode));
    } else if (gpuPerRank && config.gpusPerNode == 0 && seen[n] < ranks) {
      problems.push_back(fmt::format("{} runs {} ranks but sees {} GPU(s): start one rank per GPU", node.name, ranks, seen[n]));
    }
  }
  // a node that sees fewer GPUs than the others: a failed GPU, a driver that lost one
  const int most = seen.empty() ? 0 : *std::max_element(seen.begin(), seen.end());
  for (std::size_t n = 0; n < seen.size(); ++n) {
    if (seen[n] < most) {
      problems.push_back(fmt::format("{} sees {} GPU(s) where other nodes see {}", topology.nodes[n].name, seen[n], most));
    }
  }
  return problems;
}

std::string preflightReport(const std::vector<core::HostProbe>& probes, const core::Topology& topology,
                            const std::vector<std::string>& problems) {
  std::string out = fmt::format("# preflight: {} ranks on {} nodes\n#  {:<24} {:<12} {:>6} {:>5}  {}\n",
                                topology.ranks.size(), topology.nodes.size(), "node", "ranks", "GPUs", "usable", "build");
  const auto nodes = ranksByNode(topology);
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    if (nodes[n].empty()) continue;
    const core::HostProbe& first = probes.at(static_cast<std::size_t>(nodes[n].front()));
    out += fmt::format("   {:<24} {:<12} {:>6} {:>6}  {}\n", topology.nodes[n].name, core::formatRanks(nodes[n]),
                       first.gpuCount, first.visibleGpus, first.tool);
  }
  for (const auto& p : problems) out += "# PROBLEM: " + p + "\n";
  out += problems.empty() ? "# preflight: OK\n" : fmt::format("# preflight: {} problem(s)\n", problems.size());
  return out;
}

}  // namespace fabricmap::orchestrator
