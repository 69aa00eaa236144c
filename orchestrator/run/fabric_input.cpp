// `run --fabric FILE` (see fabric_input.h).
#include "orchestrator/run/fabric_input.h"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "core/error.h"
#include "topologies/fabric_file.h"
#include "topologies/fabric_hosts.h"

namespace fabricmap::orchestrator {
namespace {

std::string namesText(const std::vector<std::string>& names) {
  constexpr std::size_t kShown = 8;
  const std::vector<std::string> shown(names.begin(), names.begin() + static_cast<long>(std::min(kShown, names.size())));
  return fmt::format("{}{}", fmt::join(shown, ", "),
                     names.size() > kShown ? fmt::format(" and {} more", names.size() - kShown) : "");
}

}  // namespace

core::FabricGraph fabricOf(const RunConfig& config, const core::Topology& topology) {
  if (config.fabricFile.empty()) return {};
  core::FabricGraph graph = topologies::readFabricFile(config.fabricFile);
  const std::vector<std::string> missing = topologies::nodesNotInFabric(graph, topology);
  if (missing.size() == topology.nodes.size()) {
    std::vector<std::string> hosts;
    for (const core::FabricDevice& d : graph.devices) {
      if (d.kind == core::FabricDeviceKind::kHost && std::find(hosts.begin(), hosts.end(), d.name) == hosts.end()) {
        hosts.push_back(d.name);
      }
    }
    throw core::UsageError(fmt::format("--fabric {}: none of the run's nodes ({}) is in it (its hosts: {})",
                                       config.fabricFile, namesText(missing), namesText(hosts)));
  }
  const auto switches = std::count_if(graph.devices.begin(), graph.devices.end(),
                                      [](const core::FabricDevice& d) { return d.kind == core::FabricDeviceKind::kSwitch; });
  fmt::print("# fabric {} ({}): {} switches, {} cables, {} of {} nodes in it{}\n", config.fabricFile, graph.source,
             switches, graph.links.size(), topology.nodes.size() - missing.size(), topology.nodes.size(),
             missing.empty() ? "" : fmt::format(" (not: {})", namesText(missing)));
  for (const std::string& w : graph.warnings) fmt::print("# fabric: {}\n", w);
  std::fflush(stdout);
  return graph;
}

}  // namespace fabricmap::orchestrator
