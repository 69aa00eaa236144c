// The run's nodes in a fabric file (see fabric_hosts.h).
#include "topologies/fabric_hosts.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>
#include <unordered_set>

namespace fabricmap::topologies {
namespace {

std::string lowered(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string shortName(const std::string& name) { return name.substr(0, name.find('.')); }

// The first node (lowest index) of each name, its short form and lowered: a host in the fabric
// is a node when their names match, or their names up to the first dot (a fabric that names
// hosts fully, a run that knows them short, or the other way round). The same name matching whole
// matches short, so the short form is the one key.
std::unordered_map<std::string, int> nodesByName(const core::Topology& topology) {
  std::unordered_map<std::string, int> out;
  for (const core::NodeRecord& node : topology.nodes) {
    for (const std::string& name : {node.hostname, node.name}) {
      if (!name.empty()) out.try_emplace(shortName(lowered(name)), node.node);
    }
  }
  return out;
}

}  // namespace

std::vector<int> nodesOfDevices(const core::FabricGraph& graph, const core::Topology& topology) {
  const std::unordered_map<std::string, int> byName = nodesByName(topology);
  std::vector<int> out(graph.devices.size(), -1);
  for (std::size_t d = 0; d < graph.devices.size(); ++d) {
    if (graph.devices[d].kind != core::FabricDeviceKind::kHost) continue;
    if (const auto it = byName.find(shortName(lowered(graph.devices[d].name))); it != byName.end()) out[d] = it->second;
  }
  return out;
}

std::vector<std::string> nodesNotInFabric(const core::FabricGraph& graph, const core::Topology& topology) {
  const std::vector<int> placed = nodesOfDevices(graph, topology);
  const std::unordered_set<int> found(placed.begin(), placed.end());
  std::vector<std::string> out;
  for (const core::NodeRecord& n : topology.nodes) {
    if (!found.contains(n.node)) out.push_back(n.name);
  }
  return out;
}

}  // namespace fabricmap::topologies
