// Fuzz target: a fabric topology file (`--fabric FILE`), ibnetdiscover output or the text form,
// parsed and walked as the localisation will walk it. Bad input must be a UsageError; a graph
// that breaks its own promises (a link to no device, a link pointing down, two cables on one port)
// aborts like a crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string_view>
#include <utility>

#include "core/error.h"
#include "core/fabric.h"
#include "topologies/fabric_file.h"

namespace {

void checkGraph(const fabricmap::core::FabricGraph& graph) {
  const auto devices = static_cast<int>(graph.devices.size());
  if (devices == 0) std::abort();
  std::set<std::pair<int, int>> ports;
  for (const fabricmap::core::FabricLink& link : graph.links) {
    if (link.a < 0 || link.a >= devices || link.b < 0 || link.b >= devices) std::abort();
    if (graph.devices[static_cast<std::size_t>(link.a)].level > graph.devices[static_cast<std::size_t>(link.b)].level)
      std::abort();
    if (link.portA > 0 && !ports.emplace(link.a, link.portA).second) std::abort();
    if (link.portB > 0 && !ports.emplace(link.b, link.portB).second) std::abort();
  }
  for (const fabricmap::core::FabricDevice& device : graph.devices) {
    if (device.level < 0 || device.name.empty()) std::abort();
    if (device.kind == fabricmap::core::FabricDeviceKind::kHost && device.level != 0) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    checkGraph(fabricmap::topologies::parseFabric(text, "fuzz"));
  } catch (const fabricmap::core::UsageError&) {
    // the documented answer to bad input
  }
  return 0;
}
