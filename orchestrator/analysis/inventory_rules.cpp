// The inventory rules (see inventory_rules.h).
#include "orchestrator/analysis/inventory_rules.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>


namespace fabricmap::orchestrator {
namespace {

using core::Finding;
using core::FindingKind;
using core::Severity;
using topologies::Inventory;
using topologies::LinkLayer;
using topologies::NicPort;
using topologies::PcieLink;

}  // namespace

Finding inventoryFinding(FindingKind kind, Severity severity, const InventorySubject& at, const std::string& what) {
  Finding f;
  f.kind = kind;
  f.severity = severity;
  f.subject = at.node.empty() ? what : at.node + ": " + what;
  f.nodeA = at.index;
  f.confidence = 1.0;
  return f;
}

namespace {

std::string portName(const NicPort& p) { return fmt::format("{} port {}", p.device, p.port); }

std::string rateText(const NicPort& p) {
  std::string out = p.rateGbps > 0 ? fmt::format("{:g} Gb/s", p.rateGbps) : "rate unknown";
  if (p.width > 0) out += fmt::format(" ({}X{}{})", p.width, p.speed.empty() ? "" : " ", p.speed);
  return out;
}

// A port not active, or whose physical link is not up: error when none of its device's ports is
// active (the NIC carries nothing), else warning (a second port left unconnected is common, and
// still worth knowing).
void nicDownRule(const Inventory& inv, const InventorySubject& at, std::vector<Finding>& out) {
  for (const NicPort& p : inv.ports) {
    if (p.state.empty() || (p.active() && (p.physState.empty() || p.linkUp()))) continue;
    const bool deviceActive = std::any_of(inv.ports.begin(), inv.ports.end(),
                                          [&](const NicPort& q) { return q.device == p.device && q.active(); });
    Finding f = inventoryFinding(FindingKind::kNicDown, deviceActive ? Severity::kWarning : Severity::kError, at, portName(p));
    f.message = fmt::format("{}: port state {}{} - check its cable, transceiver and switch port{}", f.subject, p.state,
                            p.physState.empty() ? "" : ", physical state " + p.physState,
                            deviceActive ? " (its other port is active)" : "");
    out.push_back(std::move(f));
  }
}

// A port's (rate, width), and how many ports of each there are.
using RateWidth = std::pair<double, int>;
using RateCounts = std::map<RateWidth, int>;

// The most common (rate, width) of `counts` (on a tie the faster) and its count.
std::pair<RateWidth, int> usual(const RateCounts& counts) {
  const auto norm = std::max_element(counts.begin(), counts.end(), [](const auto& a, const auto& b) {
    return std::tie(a.second, a.first) < std::tie(b.second, b.first);
  });
  return *norm;
}

// The active ports of each link layer whose rate is known, counted by (rate, width).
std::map<LinkLayer, RateCounts> activeRates(const Inventory& inv) {
  std::map<LinkLayer, RateCounts> counts;
  for (const NicPort& p : inv.ports) {
    if (p.active() && p.rateGbps > 0) ++counts[p.linkLayer][{p.rateGbps, p.width}];
  }
  return counts;
}

bool slowerThan(const RateWidth& a, const RateWidth& b) {
  return a.first < b.first || (a.first == b.first && a.second < b.second);
}

// Active ports of one link layer at different rates or widths: the most common (rate, width) is
// the node's norm (on a tie the faster); a slower port is a warning (it carries less than its
// peers; an NDR port trained at HDR carries half), a faster one information.
void nicRateMismatchRule(const Inventory& inv, const InventorySubject& at, std::vector<Finding>& out) {
  const std::map<LinkLayer, RateCounts> counts = activeRates(inv);
  for (const NicPort& p : inv.ports) {
    if (!p.active() || p.rateGbps <= 0) continue;
    const auto norm = usual(counts.at(p.linkLayer));
    if (norm.first == std::pair{p.rateGbps, p.width}) continue;
    const bool slower = slowerThan({p.rateGbps, p.width}, norm.first);
    Finding f = inventoryFinding(FindingKind::kNicRateMismatch, slower ? Severity::kWarning : Severity::kInfo, at, portName(p));
    f.measured = p.rateGbps;
    f.expected = norm.first.first;
    f.ratio = f.measured / f.expected;
    f.unit = "Gb/s";
    const auto like = std::find_if(inv.ports.begin(), inv.ports.end(), [&](const NicPort& q) {
      return q.active() && q.linkLayer == p.linkLayer && std::pair{q.rateGbps, q.width} == norm.first;
    });
    f.message = fmt::format("{}: {} where {} of the node's active {} ports run {} - {}", f.subject, rateText(p),
                            norm.second, topologies::linkLayerName(p.linkLayer), rateText(*like),
                            slower ? "check its cable, transceiver and switch port (a link trained down)"
                                   : "the others may be the slow ones");
    out.push_back(std::move(f));
  }
}

// A PCIe link below what the device and its slot can both do. Lanes missing: warning, error below
// half the bandwidth. A GPU at a lower speed with all its lanes is information: GPUs lower their
// link speed when idle to save power; a run under load tells. A device faster than its slot is
// limited by the slot: information.
void pcieDowntrainedRule(const Inventory& inv, const InventorySubject& at, std::vector<Finding>& out) {
  for (const PcieLink& l : inv.pcie) {
    if (l.speedGTs <= 0 || l.maxSpeedGTs <= 0 || l.width <= 0 || l.maxWidth <= 0) continue;
    const double canSpeed = l.slotMaxSpeedGTs > 0 ? std::min(l.maxSpeedGTs, l.slotMaxSpeedGTs) : l.maxSpeedGTs;
    const int canWidth = l.slotMaxWidth > 0 ? std::min(l.maxWidth, l.slotMaxWidth) : l.maxWidth;
    const std::string what = fmt::format("{} {}", l.device, l.busId);
    const bool slotLimited = canSpeed < l.maxSpeedGTs || canWidth < l.maxWidth;
    if (l.speedGTs >= canSpeed && l.width >= canWidth) {
      if (slotLimited) {
        Finding f = inventoryFinding(FindingKind::kPcieDowntrained, Severity::kInfo, at, what);
        f.message = fmt::format("{}: x{} at {:g} GT/s, as its slot allows; the device can do x{} at {:g} GT/s", f.subject,
                                l.width, l.speedGTs, l.maxWidth, l.maxSpeedGTs);
        out.push_back(std::move(f));
      }
      continue;
    }
    Finding f = inventoryFinding(FindingKind::kPcieDowntrained, Severity::kWarning, at, what);
    f.measured = l.speedGTs * l.width;
    f.expected = canSpeed * canWidth;
    f.ratio = f.measured / f.expected;
    f.unit = "GT/s x lanes";
    const bool idleGpu = l.gpu && l.width >= canWidth;
    if (idleGpu) {
      f.severity = Severity::kInfo;
    } else if (f.ratio < 0.5) {
      f.severity = Severity::kError;
    }
    f.message = fmt::format("{}: PCIe link x{} at {:g} GT/s where it{} can do x{} at {:g} GT/s ({:.2f}x) - {}", f.subject,
                            l.width, l.speedGTs, slotLimited ? " and its slot" : "", canWidth, canSpeed, f.ratio,
                            idleGpu ? "a GPU lowers its link speed when idle; look again under load"
                                    : "reseat the device or check its riser and slot");
    out.push_back(std::move(f));
  }
}

void noGpuDirectRule(const Inventory& inv, const InventorySubject& at, std::vector<Finding>& out) {
  if (inv.gpuDirect.ready != topologies::Tristate::kNo) return;
  Finding f = inventoryFinding(FindingKind::kNoGpuDirect, Severity::kWarning, at, "GPUDirect RDMA");
  f.message = fmt::format("{}: {} - NCCL then stages inter-node GPU traffic through host memory (load nvidia_peermem, "
                          "or confirm dma-buf)",
                          f.subject, inv.gpuDirect.how);
  out.push_back(std::move(f));
}

using InventoryRule = void (*)(const Inventory&, const InventorySubject&, std::vector<Finding>&);

struct Rule {
  AnalysisRule about;
  InventoryRule apply;
};

const std::vector<Rule>& rules() {
  static const std::vector<Rule> kRules{
      {{"nic_down", "an RDMA port not active, or its physical link not up"}, nicDownRule},
      {{"nic_rate_mismatch", "active RDMA ports of one link layer at different rates or widths (in a node, or a "
                             "node's usual rate against most nodes')"}, nicRateMismatchRule},
      {{"pcie_downtrained", "a GPU's or NIC's PCIe link below what the device and its slot can do"},
       pcieDowntrainedRule},
      {{"no_gpudirect", "GPUs and RDMA NICs but no peer-memory module"}, noGpuDirectRule},
  };
  return kRules;
}

}  // namespace

const std::vector<AnalysisRule>& inventoryRules() {
  static const std::vector<AnalysisRule> kAbout = [] {
    std::vector<AnalysisRule> about;
    for (const Rule& r : rules()) about.push_back(r.about);
    about.push_back({"link_errors", "RDMA port error counters that grew between two reads"});
    about.push_back({"binding", "a rank whose allowed CPUs are not the ones near its GPU (or its NIC)"});
    about.push_back({"gpu_memory", "a GPU with under 0.9x the memory of its model's largest in the run, or below the "
                                   "profile's minimum"});
    about.push_back({"gpu_memory_health", "a GPU whose memory NVML reports failed or pending row remaps, retired "
                                          "pages or ECC off"});
    return about;
  }();
  return kAbout;
}

std::vector<Finding> inventoryFindings(const Inventory& inventory, const InventorySubject& at) {
  std::vector<Finding> out;
  for (const Rule& r : rules()) r.apply(inventory, at, out);
  return out;
}

// A node's usual active port of `layer` at (rate, width): the one its message names.
const NicPort& examplePort(const Inventory& inv, LinkLayer layer, const RateWidth& rate) {
  return *std::find_if(inv.ports.begin(), inv.ports.end(), [&](const NicPort& p) {
    return p.active() && p.linkLayer == layer && RateWidth{p.rateGbps, p.width} == rate;
  });
}

std::vector<Finding> crossNodeRateFindings(const std::vector<NodeInventory>& nodes) {
  // each node's usual (rate, width) per link layer, and how many nodes have each
  std::map<LinkLayer, RateCounts> nodesAt;
  std::vector<std::map<LinkLayer, RateCounts>> rates;
  for (const NodeInventory& n : nodes) {
    rates.push_back(activeRates(n.inventory));
    for (const auto& [layer, counts] : rates.back()) ++nodesAt[layer][usual(counts).first];
  }
  std::vector<Finding> out;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    for (const auto& [at, counts] : rates[i]) {
      const LinkLayer layer = at;  // a lambda below takes it (clang cannot capture a binding)
      const auto mine = usual(counts).first;
      const auto [usualRate, count] = usual(nodesAt.at(layer));
      const RateWidth norm = usualRate;
      if (mine == norm || !slowerThan(mine, norm)) continue;
      const auto other = std::find_if(rates.begin(), rates.end(), [&](const std::map<LinkLayer, RateCounts>& r) {
        return r.count(layer) > 0 && usual(r.at(layer)).first == norm;
      });
      Finding f = inventoryFinding(FindingKind::kNicRateMismatch, Severity::kWarning, nodes[i].at,
                          fmt::format("{} ports", topologies::linkLayerName(layer)));
      f.measured = mine.first;
      f.expected = norm.first;
      f.ratio = f.measured / f.expected;
      f.unit = "Gb/s";
      f.message = fmt::format(
          "{}: its active {} ports run {} where {} of {} nodes' run {} - a node on slower NICs or cables than the others",
          f.subject, topologies::linkLayerName(layer), rateText(examplePort(nodes[i].inventory, layer, mine)), count,
          nodes.size(), rateText(examplePort(nodes[static_cast<std::size_t>(other - rates.begin())].inventory, layer, norm)));
      out.push_back(std::move(f));
    }
  }
  return out;
}

// link_downed growing means the link went down and came back: error; other counters warning.
std::vector<Finding> linkErrorFindings(const Inventory& before, const Inventory& after, const InventorySubject& at) {
  std::vector<Finding> out;
  for (const topologies::CounterGrowth& g : topologies::counterGrowth(before, after)) {
    Finding f = inventoryFinding(FindingKind::kLinkErrors, g.counter == "link_downed" ? Severity::kError : Severity::kWarning, at,
                        fmt::format("{} port {}", g.device, g.port));
    f.measured = static_cast<double>(g.growth);
    f.unit = g.counter;
    f.message = fmt::format("{}: {} grew by {} - check its cable, transceiver and switch port", f.subject, g.counter,
                            g.growth);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace fabricmap::orchestrator
