// Fuzz target: a simulated fabric's shape file (bench/sim/fat_tree). Any text parses to a shape or
// throws std::runtime_error; a shape small enough is built, its faults applied, and a route read.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "bench/sim/fat_tree.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const fabricmap::sim::Shape shape = fabricmap::sim::parseShape(text, "shape");
    if (static_cast<long>(shape.pods) * shape.leaves * shape.hostsPerLeaf > 512 || shape.spines > 64 || shape.cores > 64) {
      return 0;
    }
    const fabricmap::sim::FatTree tree = fabricmap::sim::buildFatTree(shape);
    const int last = static_cast<int>(tree.hosts.size()) - 1;
    if (last > 0 && tree.route(0, last).empty()) __builtin_trap();
    for (const auto& l : tree.links) {
      if (!(l.gbps > 0)) __builtin_trap();  // a link at 0 would hold a simulated transfer forever
    }
  } catch (const std::runtime_error&) {
  }
  return 0;
}
