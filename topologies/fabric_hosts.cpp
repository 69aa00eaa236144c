// The run's nodes in a fabric file (see fabric_hosts.h).
#include "topologies/fabric_hosts.h"

#include <algorithm>
#include <cctype>

namespace fabricmap::topologies {
namespace {

std::string lowered(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string shortName(const std::string& name) { return name.substr(0, name.find('.')); }

bool sameHost(const std::string& fabricName, const core::NodeRecord& node) {
  const std::string f = lowered(fabricName);
  for (const std::string& n : {lowered(node.hostname), lowered(node.name)}) {
    if (!n.empty() && (f == n || shortName(f) == shortName(n))) return true;
  }
  return false;
}

}  // namespace

std::vector<int> nodesOfDevices(const core::FabricGraph& graph, const core::Topology& topology) {
  std::vector<int> out(graph.devices.size(), -1);
  for (std::size_t d = 0; d < graph.devices.size(); ++d) {
    if (graph.devices[d].kind != core::FabricDeviceKind::kHost) continue;
    const auto node = std::find_if(topology.nodes.begin(), topology.nodes.end(),
                                   [&](const core::NodeRecord& n) { return sameHost(graph.devices[d].name, n); });
    if (node != topology.nodes.end()) out[d] = node->node;
  }
  return out;
}

std::vector<std::string> nodesNotInFabric(const core::FabricGraph& graph, const core::Topology& topology) {
  const std::vector<int> placed = nodesOfDevices(graph, topology);
  std::vector<std::string> out;
  for (const core::NodeRecord& n : topology.nodes) {
    if (std::find(placed.begin(), placed.end(), n.node) == placed.end()) out.push_back(n.name);
  }
  return out;
}

}  // namespace fabricmap::topologies
