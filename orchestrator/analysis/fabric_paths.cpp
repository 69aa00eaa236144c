// Where the run's nodes hang in the fabric and what their pairs cross (see fabric_paths.h).
#include "orchestrator/analysis/fabric_paths.h"
#include "orchestrator/analysis/analysis.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include <fmt/format.h>

#include "topologies/fabric_hosts.h"

namespace fabricmap::orchestrator::internal {
namespace {

std::size_t at(int index) { return static_cast<std::size_t>(index); }

// A cable between two devices the graph has, the lower one first (a file read back may be damaged).
bool goesUp(const core::FabricGraph& g, const core::FabricLink& l) {
  const auto n = static_cast<int>(g.devices.size());
  return l.a >= 0 && l.b >= 0 && l.a < n && l.b < n && g.devices[at(l.b)].level > g.devices[at(l.a)].level;
}

// Per device, the devices its cables lead up to (a level higher).
std::vector<std::vector<int>> upwards(const core::FabricGraph& g) {
  std::vector<std::vector<int>> up(g.devices.size());
  for (const core::FabricLink& l : g.links) {
    if (goesUp(g, l)) up[at(l.a)].push_back(l.b);
  }
  return up;
}

// The switches above a node's adapters (`adapters`), per level (level 1 first): up each cable
// whose upper end is a level higher.
std::vector<std::vector<int>> switchesAbove(const std::vector<std::vector<int>>& up, const std::vector<int>& adapters) {
  std::vector<std::vector<int>> above;
  std::set<int> frontier(adapters.begin(), adapters.end());
  while (!frontier.empty()) {
    std::set<int> next;
    for (int d : frontier) next.insert(up[at(d)].begin(), up[at(d)].end());
    if (next.empty()) break;
    above.emplace_back(next.begin(), next.end());
    frontier = std::move(next);
  }
  return above;
}

std::vector<int> uplinksOf(const core::FabricGraph& g, int device) {
  std::vector<int> out;
  for (std::size_t i = 0; i < g.links.size(); ++i) {
    const core::FabricLink& l = g.links[i];
    if (l.a == device && goesUp(g, l)) out.push_back(static_cast<int>(i));
  }
  return out;
}

// One kSwitch suspect per switch above a placed node, one kUplinks per such switch with cables up.
void addSuspects(const core::FabricGraph& g, FabricPaths& p) {
  p.switchSuspect.assign(g.devices.size(), -1);
  p.uplinkSuspect.assign(g.devices.size(), -1);
  for (int x : p.placed) {
    for (const std::vector<int>& level : p.above[at(x)]) {
      for (int d : level) {
        if (p.switchSuspect[at(d)] < 0) {
          p.switchSuspect[at(d)] = static_cast<int>(p.suspects.size());
          p.suspects.push_back({FabricSuspect::Kind::kSwitch, d, {}, {}});
          if (std::vector<int> up = uplinksOf(g, d); !up.empty()) {
            p.uplinkSuspect[at(d)] = static_cast<int>(p.suspects.size());
            p.suspects.push_back({FabricSuspect::Kind::kUplinks, d, std::move(up), {}});
          }
        }
        p.suspects[at(p.switchSuspect[at(d)])].nodesBelow.push_back(x);
        if (p.uplinkSuspect[at(d)] >= 0) p.suspects[at(p.uplinkSuspect[at(d)])].nodesBelow.push_back(x);
      }
    }
  }
}

}  // namespace

FabricPaths fabricPaths(const core::FabricGraph& graph, const core::Topology& topology) {
  FabricPaths p;
  p.nodes = static_cast<int>(topology.nodes.size());
  const std::vector<int> nodeOf = topologies::nodesOfDevices(graph, topology);
  std::vector<std::vector<int>> adapters(at(p.nodes));
  for (std::size_t d = 0; d < nodeOf.size(); ++d) {
    if (nodeOf[d] >= 0 && nodeOf[d] < p.nodes) adapters[at(nodeOf[d])].push_back(static_cast<int>(d));
  }
  const std::vector<std::vector<int>> up = upwards(graph);
  p.above.resize(at(p.nodes));
  for (int x = 0; x < p.nodes; ++x) {
    p.above[at(x)] = switchesAbove(up, adapters[at(x)]);
    if (!p.above[at(x)].empty()) p.placed.push_back(x);
  }
  addSuspects(graph, p);
  return p;
}

std::vector<int> FabricPaths::crossed(int x, int y) const {
  if (x < 0 || y < 0 || x >= nodes || y >= nodes || x == y) return {};
  const auto& ax = above[at(x)];
  const auto& ay = above[at(y)];
  std::vector<int> out;
  for (std::size_t l = 0; l < std::min(ax.size(), ay.size()); ++l) {
    std::vector<int> common;
    std::set_intersection(ax[l].begin(), ax[l].end(), ay[l].begin(), ay[l].end(), std::back_inserter(common));
    if (common.empty()) continue;
    // below the meeting level, each end's one switch of a level and its uplinks; there, the one shared
    for (std::size_t below = 0; below < l; ++below) {
      for (const auto* side : {&ax, &ay}) {
        if ((*side)[below].size() != 1) continue;
        const int d = (*side)[below].front();
        out.push_back(switchSuspect[at(d)]);
        if (uplinkSuspect[at(d)] >= 0) out.push_back(uplinkSuspect[at(d)]);
      }
    }
    if (common.size() == 1) out.push_back(switchSuspect[at(common.front())]);
    return out;
  }
  return {};
}

std::string suspectName(const core::FabricGraph& graph, const FabricSuspect& suspect) {
  const core::FabricDevice& d = graph.devices[at(suspect.device)];
  const std::string guid = d.guid.empty() ? "" : fmt::format(" ({})", d.guid);
  if (suspect.kind == FabricSuspect::Kind::kSwitch) return d.name + guid;
  std::vector<std::string> ends;
  for (int i : suspect.uplinks) {
    const core::FabricLink& l = graph.links[at(i)];
    const std::string peer = graph.devices[at(l.b)].name;
    ends.push_back(fmt::format("{}-> {}{}", l.portA > 0 ? fmt::format("port {} ", l.portA) : "", peer,
                               l.portB > 0 ? fmt::format(" port {}", l.portB) : ""));
  }
  return fmt::format("{}{} {}", d.name, guid, fmt::join(ends, ", "));
}

}  // namespace fabricmap::orchestrator::internal

namespace fabricmap::orchestrator {

namespace {

using internal::at;

// Per leaf (device), its host adapters' cables in the order of the leaf's ports (the file's order
// where no port is given): index into FabricGraph::links.
std::map<int, std::vector<int>> hostCablesByLeaf(const core::FabricGraph& g) {
  std::map<int, std::vector<int>> out;
  for (std::size_t i = 0; i < g.links.size(); ++i) {
    const core::FabricLink& l = g.links[i];
    if (l.a >= 0 && l.b >= 0 && at(l.a) < g.devices.size() && at(l.b) < g.devices.size() &&
        g.devices[at(l.a)].kind == core::FabricDeviceKind::kHost) {
      out[l.b].push_back(static_cast<int>(i));
    }
  }
  for (auto& [leaf, cables] : out) {
    std::stable_sort(cables.begin(), cables.end(),
                     [&](int x, int y) { return g.links[at(x)].portB < g.links[at(y)].portB; });
  }
  return out;
}

// Node x's lane at `leaf` (see UplinkParts): its first adapter's position among the leaf's host
// cables, modulo the leaf's cables up; -1 where no adapter of x hangs on it.
int laneAt(const core::FabricGraph& g, const std::vector<int>& nodeOf, const std::vector<int>& cables, int x,
           int width) {
  for (std::size_t i = 0; i < cables.size(); ++i) {
    const int adapter = g.links[at(cables[i])].a;
    if (at(adapter) < nodeOf.size() && nodeOf[at(adapter)] == x) return static_cast<int>(i) % std::max(width, 1);
  }
  return -1;
}

}  // namespace

UplinkParts uplinkParts(const core::Topology& topology) {
  UplinkParts out;
  out.claims.resize(topology.nodes.size());
  out.lanes.resize(topology.nodes.size());
  if (topology.fabric.devices.empty()) return out;
  const core::FabricGraph& g = topology.fabric;
  const internal::FabricPaths paths = internal::fabricPaths(g, topology);
  for (const internal::FabricSuspect& s : paths.suspects) {
    if (s.kind == internal::FabricSuspect::Kind::kUplinks) out.widths[s.device] = static_cast<int>(s.uplinks.size());
  }
  const std::map<int, std::vector<int>> cables = hostCablesByLeaf(g);
  const std::vector<int> nodeOf = topologies::nodesOfDevices(g, topology);
  for (int x : paths.placed) {
    std::vector<std::pair<int, int>> mine;  // (switch, lane)
    const auto& above = paths.above[at(x)];
    for (std::size_t level = 0; level < above.size(); ++level) {
      // several switches on a level: which one a pair crosses is the routing's choice
      const int d = above[level].size() == 1 ? above[level].front() : -1;
      if (d < 0 || paths.uplinkSuspect[at(d)] < 0) continue;
      const auto leaf = cables.find(d);
      const bool lanes = level == 0 && leaf != cables.end();  // the leaf it hangs on: its lane there
      mine.emplace_back(d, lanes ? laneAt(g, nodeOf, leaf->second, x, out.widths.at(d)) : -1);
    }
    std::sort(mine.begin(), mine.end());
    for (const auto& [part, lane] : mine) {
      out.claims[at(x)].push_back(part);
      out.lanes[at(x)].push_back(lane);
    }
  }
  return out;
}

}  // namespace fabricmap::orchestrator
