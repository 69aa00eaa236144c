// Pure helpers over the fabric graph (see fabric.h): levels above the hosts, a host's adapters.
#include "core/fabric.h"

#include <deque>
#include <utility>

namespace fabricmap::core {
namespace {

using Neighbours = std::vector<std::vector<int>>;

Neighbours neighboursOf(const FabricGraph& graph) {
  Neighbours out(graph.devices.size());
  for (const FabricLink& link : graph.links) {
    if (link.a == link.b) continue;  // a cable looping back to the same switch says nothing of levels
    out[static_cast<std::size_t>(link.a)].push_back(link.b);
    out[static_cast<std::size_t>(link.b)].push_back(link.a);
  }
  return out;
}

// Breadth-first from the devices already in `queue`, each one above the device that reached it.
void spread(const Neighbours& neighbours, std::deque<int>& queue, std::vector<int>& level) {
  while (!queue.empty()) {
    const int device = queue.front();
    queue.pop_front();
    for (const int next : neighbours[static_cast<std::size_t>(device)]) {
      int& nextLevel = level[static_cast<std::size_t>(next)];
      if (nextLevel >= 0) continue;
      nextLevel = level[static_cast<std::size_t>(device)] + 1;
      queue.push_back(next);
    }
  }
}

// Seeds every device that `isSeed` picks and is still unnumbered at `seedLevel`, then spreads.
template <typename Pick>
void spreadFrom(const Neighbours& neighbours, int seedLevel, Pick isSeed, std::vector<int>& level) {
  std::deque<int> queue;
  for (std::size_t d = 0; d < level.size(); ++d) {
    if (level[d] >= 0 || !isSeed(d)) continue;
    level[d] = seedLevel;
    queue.push_back(static_cast<int>(d));
  }
  spread(neighbours, queue, level);
}

}  // namespace

void assignLevels(FabricGraph& graph) {
  const Neighbours neighbours = neighboursOf(graph);
  std::vector<bool> upperEnd(graph.devices.size(), false);
  for (const FabricLink& link : graph.links) {
    if (link.a != link.b) upperEnd[static_cast<std::size_t>(link.b)] = true;
  }
  std::vector<int> level(graph.devices.size(), -1);
  const auto isHost = [&](std::size_t d) { return graph.devices[d].kind == FabricDeviceKind::kHost; };
  const auto isBottom = [&](std::size_t d) { return !upperEnd[d]; };
  spreadFrom(neighbours, 0, isHost, level);
  spreadFrom(neighbours, 1, isBottom, level);  // the parts without a host
  for (std::size_t d = 0; d < level.size(); ++d) {  // a part where every switch is some link's top
    if (level[d] >= 0) continue;
    level[d] = 1;
    std::deque<int> queue{static_cast<int>(d)};
    spread(neighbours, queue, level);
  }
  for (std::size_t d = 0; d < level.size(); ++d) graph.devices[d].level = level[d];
  for (FabricLink& link : graph.links) {
    if (level[static_cast<std::size_t>(link.a)] <= level[static_cast<std::size_t>(link.b)]) continue;
    std::swap(link.a, link.b);
    std::swap(link.portA, link.portB);
  }
}

std::vector<int> adaptersOfHost(const FabricGraph& graph, std::string_view host) {
  std::vector<int> out;
  for (std::size_t d = 0; d < graph.devices.size(); ++d) {
    const FabricDevice& device = graph.devices[d];
    if (device.kind == FabricDeviceKind::kHost && device.name == host) out.push_back(static_cast<int>(d));
  }
  return out;
}

}  // namespace fabricmap::core
