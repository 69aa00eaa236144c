// `run --fabric FILE` (see fabric_input.h).
#include "orchestrator/run/fabric_input.h"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "core/error.h"
#include "orchestrator/analysis/analysis.h"
#include "orchestrator/run/resume.h"
#include "topologies/fabric_file.h"
#include "topologies/fabric_hosts.h"
#include "worker/comm.h"
#include "worker/mpi_check.h"

namespace fabricmap::orchestrator {
namespace {

std::string namesText(const std::vector<std::string>& names) {
  constexpr std::size_t kShown = 8;
  const std::vector<std::string> shown(names.begin(), names.begin() + static_cast<long>(std::min(kShown, names.size())));
  return fmt::format("{}{}", fmt::join(shown, ", "),
                     names.size() > kShown ? fmt::format(" and {} more", names.size() - kShown) : "");
}

}  // namespace

namespace {

// The file read and checked against the run's nodes; `missing`: those it lacks.
core::FabricGraph placedFabric(const std::string& path, const core::Topology& topology,
                               std::vector<std::string>& missing) {
  core::FabricGraph graph = topologies::readFabricFile(path);
  missing = topologies::nodesNotInFabric(graph, topology);
  if (missing.size() < topology.nodes.size()) return graph;
  std::vector<std::string> hosts;
  for (const core::FabricDevice& d : graph.devices) {
    if (d.kind == core::FabricDeviceKind::kHost && std::find(hosts.begin(), hosts.end(), d.name) == hosts.end()) {
      hosts.push_back(d.name);
    }
  }
  throw core::UsageError(fmt::format("--fabric {}: none of the run's nodes ({}) is in it (its hosts: {})", path,
                                     namesText(missing), namesText(hosts)));
}

}  // namespace

core::FabricGraph fabricOf(const RunConfig& config, const core::Topology& topology) {
  if (config.fabricFile.empty()) return {};
  std::vector<std::string> missing;
  core::FabricGraph graph = placedFabric(config.fabricFile, topology, missing);
  const auto switches = std::count_if(graph.devices.begin(), graph.devices.end(),
                                      [](const core::FabricDevice& d) { return d.kind == core::FabricDeviceKind::kSwitch; });
  fmt::print("# fabric {} ({}): {} switches, {} cables, {} of {} nodes in it{}\n", config.fabricFile, graph.source,
             switches, graph.links.size(), topology.nodes.size() - missing.size(), topology.nodes.size(),
             missing.empty() ? "" : fmt::format(" (not: {})", namesText(missing)));
  for (const std::string& w : graph.warnings) fmt::print("# fabric: {}\n", w);
  std::fflush(stdout);
  return graph;
}

FabricClaims agreedClaims(MPI_Comm world, const core::Topology& topology) {
  // wire format: per node its claims' count, the claims and their lanes, then per width its part and width
  std::vector<int> wire;
  int rank = 0;
  FM_MPI(MPI_Comm_rank(world, &rank));
  if (rank == 0 && !topology.fabric.devices.empty()) {
    const UplinkParts parts = uplinkParts(topology);
    for (std::size_t node = 0; node < parts.claims.size(); ++node) {
      wire.push_back(static_cast<int>(parts.claims[node].size()));
      wire.insert(wire.end(), parts.claims[node].begin(), parts.claims[node].end());
      wire.insert(wire.end(), parts.lanes[node].begin(), parts.lanes[node].end());
    }
    for (const auto& [part, width] : parts.widths) wire.insert(wire.end(), {part, width});
  }
  wire = worker::broadcastInts(world, std::move(wire));
  FabricClaims out;
  if (wire.empty()) return out;
  std::size_t i = 0;
  for (std::size_t node = 0; node < topology.nodes.size() && i < wire.size(); ++node) {
    const auto count = static_cast<std::ptrdiff_t>(wire[i]);
    const auto first = wire.begin() + static_cast<std::ptrdiff_t>(i) + 1;
    out.nodes.emplace_back(first, first + count);
    out.lanes.emplace_back(first + count, first + 2 * count);
    i += 2 * static_cast<std::size_t>(count) + 1;
  }
  for (; i + 1 < wire.size(); i += 2) out.widths[wire[i]] = wire[i + 1];
  return out;
}

namespace {

AnalysisConfig recordedThresholds(const results::ResultsFile& file) {
  try {
    return analysisConfigOf(parseRunOptions(recordedRunOf(file).args).config);
  } catch (const std::exception&) {
    return {};  // an imported log, or a file that did not record its arguments
  }
}

bool sameFinding(const core::Finding& a, const core::Finding& b) {
  return a.kind == b.kind && a.subject == b.subject && a.nodeA == b.nodeA && a.nodeB == b.nodeB && a.rank == b.rank;
}

}  // namespace

void judgeWithFabric(results::ResultsFile& file, const std::string& fabricFile) {
  if (!file.matrices.pairsMeasured) {
    throw core::UsageError(fmt::format("--fabric: {} has no node matrix to judge (its run measured no pairs: "
                                       "run --pairwise across the nodes)", file.path));
  }
  if (file.matrices.nodeBw.n < 2) {
    throw core::UsageError(fmt::format("--fabric: {} measured pairs inside one node; a fabric joins nodes, "
                                       "so it needs a run across two or more nodes", file.path));
  }
  core::Topology bare = file.topology;
  bare.fabric = {};
  std::vector<std::string> missing;
  core::FabricGraph graph = placedFabric(fabricFile, bare, missing);
  const AnalysisConfig thresholds = recordedThresholds(file);
  const std::vector<core::Finding> without = analyze(file.matrices, bare, thresholds);
  file.topology.fabric = std::move(graph);
  std::erase_if(file.findings, [&](const core::Finding& f) {
    return std::any_of(without.begin(), without.end(), [&](const core::Finding& w) { return sameFinding(f, w); });
  });
  for (core::Finding& f : analyze(file.matrices, file.topology, thresholds)) file.findings.push_back(std::move(f));
}

}  // namespace fabricmap::orchestrator
