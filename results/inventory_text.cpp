// One node's inventory in a few words (see inventory_text.h).
#include "results/inventory_text.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/units.h"

namespace fabricmap::results {

std::string nicsSummary(const core::Topology& t, int node) {
  std::map<std::string, int> groups;
  std::vector<std::string> down;
  for (const core::NicRecord& n : t.inventory.nics) {
    if (n.node != node) continue;
    if (n.kind == "rdma" && n.state != "ACTIVE") {
      down.push_back(fmt::format("{} port {} {}", n.device, n.port, n.state.empty() ? "?" : n.state));
      continue;
    }
    const std::string rate = n.rateGbps > 0 ? fmt::format("{:g} Gb/s", n.rateGbps) : "rate ?";
    ++groups[fmt::format("{} {}{}", rate, n.linkLayer, n.speed.empty() ? "" : " (" + n.speed + ")")];
  }
  std::string out;
  for (const auto& [what, count] : groups) out += fmt::format("{}{}x {}", out.empty() ? "" : ", ", count, what);
  for (const std::string& d : down) out += (out.empty() ? "" : "; ") + d;
  return out.empty() ? "none" : out;
}

std::string pcieSummary(const core::Topology& t, int node) {
  int full = 0;
  std::vector<std::string> below;
  for (const core::PcieRecord& l : t.inventory.pcie) {
    if (l.node != node) continue;
    if (l.width > 0 && l.maxWidth > 0 && (l.width < l.maxWidth || l.speedGTs < l.maxSpeedGTs)) {
      below.push_back(fmt::format("{} {}: x{} {:g} GT/s of x{} {:g}", l.device, l.busId, l.width, l.speedGTs, l.maxWidth,
                                  l.maxSpeedGTs));
    } else {
      ++full;
    }
  }
  std::string out = fmt::format("{} at their maximum", full);
  for (const std::string& b : below) out += "; " + b;
  return out;
}

namespace {

// "ECC on; GPU 3: remap pending": what NVML said of the node's GPUs' memory (/inventory/gpus);
// empty when it said nothing.
std::string gpuHealthSummary(const core::Topology& t, int node) {
  int on = 0;
  int off = 0;
  int remapped = 0;
  std::vector<std::string> problems;
  for (const core::GpuInventoryRecord& g : t.inventory.gpus) {
    if (g.node != node) continue;
    on += g.ecc == "yes" ? 1 : 0;
    off += g.ecc == "no" ? 1 : 0;
    remapped += std::max(g.remappedCorrectable, 0) + std::max(g.remappedUncorrectable, 0);
    std::vector<std::string> says;
    if (g.remapFailed == "yes") says.emplace_back("remap failed");
    if (g.remapPending == "yes") says.emplace_back("remap pending");
    if (g.retirePending == "yes") says.emplace_back("retirement pending");
    if (g.retiredDoubleBit > 0) says.push_back(fmt::format("{} pages retired (double-bit)", g.retiredDoubleBit));
    if (!says.empty()) problems.push_back(fmt::format("GPU {}: {}", g.index, fmt::join(says, ", ")));
  }
  std::vector<std::string> parts;
  if (off > 0) parts.push_back(fmt::format("ECC off on {} of {}", off, on + off));
  else if (on > 0) parts.emplace_back("ECC on");
  if (remapped > 0) parts.push_back(fmt::format("{} rows remapped", remapped));
  parts.insert(parts.end(), problems.begin(), problems.end());
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace

std::string gpuMemorySummary(const core::Topology& t, int node) {
  // every GPU of the node where its discovery was recorded, else each rank's GPU once
  std::map<std::pair<std::uint64_t, std::string>, int> sizes;
  for (const core::GpuInventoryRecord& g : t.inventory.gpus) {
    if (g.node == node && g.memoryBytes > 0) ++sizes[{g.memoryBytes, g.name}];
  }
  std::set<std::string> seen;
  for (const core::RankRecord& r : t.ranks) {
    if (!sizes.empty() || r.node != node || r.gpuMemoryBytes == 0) continue;
    if (seen.insert(r.gpuUuid.empty() ? std::to_string(r.gpuIndex) : r.gpuUuid).second) ++sizes[{r.gpuMemoryBytes, r.gpuName}];
  }
  std::string out;
  for (const auto& [size, count] : sizes) {
    out += fmt::format("{}{}x {} {}", out.empty() ? "" : ", ", count, core::formatBytes(size.first), size.second);
  }
  const std::string health = gpuHealthSummary(t, node);
  if (out.empty()) return health.empty() ? "-" : health;
  return health.empty() ? out : out + "; " + health;
}

std::string bindingSummary(const core::Topology& t, int node) {
  std::vector<int> away;      // none of its CPUs near its GPU
  std::vector<int> unbound;   // some
  std::vector<int> farNic;    // near its GPU, none near its NIC
  int near = 0;
  for (const core::RankRecord& r : t.ranks) {
    if (r.node != node || r.nearGpu.empty()) continue;
    if (r.nearGpu == "no") away.push_back(r.rank);
    else if (r.nearGpu == "partly") unbound.push_back(r.rank);
    else if (r.nearNic == "no") farNic.push_back(r.rank);
    else ++near;
  }
  std::vector<std::string> parts;
  const auto ranks = [](const std::vector<int>& list) {
    return fmt::format("rank{} {}", list.size() == 1 ? "" : "s", core::formatRanks(list));
  };
  if (!away.empty()) parts.push_back(ranks(away) + " away from their GPU");
  if (!unbound.empty()) parts.push_back(ranks(unbound) + " not bound");
  if (!farNic.empty()) parts.push_back(ranks(farNic) + " away from their NIC");
  if (near > 0) parts.push_back(fmt::format("{} near their GPU", near));
  return parts.empty() ? "-" : fmt::format("{}", fmt::join(parts, "; "));
}

std::vector<std::pair<std::string, std::string>> endpointWays(const std::vector<core::EndpointRecord>& endpoints) {
  std::vector<std::pair<std::string, std::vector<int>>> ways;  // transports, ranks
  for (const core::EndpointRecord& e : endpoints) {
    auto found = std::find_if(ways.begin(), ways.end(), [&](const auto& w) { return w.first == e.transports; });
    if (found == ways.end()) found = ways.insert(ways.end(), {e.transports, {}});
    if (std::find(found->second.begin(), found->second.end(), e.rank) == found->second.end()) {
      found->second.push_back(e.rank);
    }
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& [transports, ranks] : ways) {
    std::sort(ranks.begin(), ranks.end());
    out.emplace_back(core::formatRanks(ranks), transports);
  }
  return out;
}

std::string countersSummary(const core::Topology& t, int node) {
  std::uint64_t grown = 0;
  int read = 0;
  for (const core::CounterRecord& c : t.inventory.counters) {
    if (c.node != node) continue;
    ++read;
    grown += c.growth();
  }
  return read == 0 ? "-" : fmt::format("+{} ({} counters)", grown, read);
}

std::string inventoryLine(const core::Topology& topology, int node) {
  const auto n = std::find_if(topology.inventory.nodes.begin(), topology.inventory.nodes.end(),
                              [&](const core::NodeInventoryRecord& r) { return r.node == node; });
  if (n == topology.inventory.nodes.end()) return "not read";
  return fmt::format("NICs {}, GPUDirect {}", nicsSummary(topology, node), n->gpuDirect);
}

}  // namespace fabricmap::results
