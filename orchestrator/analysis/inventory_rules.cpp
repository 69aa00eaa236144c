// The inventory rules (see inventory_rules.h).
#include "orchestrator/analysis/inventory_rules.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "core/units.h"
#include "topologies/node_records.h"

namespace fabricmap::orchestrator {
namespace {

using core::Finding;
using core::FindingKind;
using core::Severity;
using topologies::Inventory;
using topologies::LinkLayer;
using topologies::NicPort;
using topologies::PcieLink;

Finding finding(FindingKind kind, Severity severity, const InventorySubject& at, const std::string& what) {
  Finding f;
  f.kind = kind;
  f.severity = severity;
  f.subject = at.node.empty() ? what : at.node + ": " + what;
  f.nodeA = at.index;
  f.confidence = 1.0;
  return f;
}

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
    Finding f = finding(FindingKind::kNicDown, deviceActive ? Severity::kWarning : Severity::kError, at, portName(p));
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
    Finding f = finding(FindingKind::kNicRateMismatch, slower ? Severity::kWarning : Severity::kInfo, at, portName(p));
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
        Finding f = finding(FindingKind::kPcieDowntrained, Severity::kInfo, at, what);
        f.message = fmt::format("{}: x{} at {:g} GT/s, as its slot allows; the device can do x{} at {:g} GT/s", f.subject,
                                l.width, l.speedGTs, l.maxWidth, l.maxSpeedGTs);
        out.push_back(std::move(f));
      }
      continue;
    }
    Finding f = finding(FindingKind::kPcieDowntrained, Severity::kWarning, at, what);
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
  Finding f = finding(FindingKind::kNoGpuDirect, Severity::kWarning, at, "GPUDirect RDMA");
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
    about.push_back({"binding", "a rank whose allowed CPUs are not the ones near its GPU"});
    about.push_back({"gpu_memory", "a GPU with under 0.9x the memory of its model's largest in the run, or below the "
                                   "profile's minimum"});
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
      Finding f = finding(FindingKind::kNicRateMismatch, Severity::kWarning, nodes[i].at,
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

namespace {

// A GPU's model without its memory size: "NVIDIA A100-SXM4-40GB" and "-80GB" are one model.
std::string modelOf(const std::string& name) {
  std::string out;
  for (std::size_t i = 0; i < name.size();) {
    std::size_t j = i;
    while (j < name.size() && std::isdigit(static_cast<unsigned char>(name[j])) != 0) ++j;
    if (j > i && name.compare(j, 2, "GB") == 0) {
      i = j + 2;
      continue;
    }
    out += name.substr(i, std::max<std::size_t>(j - i, 1));
    i = std::max(j, i + 1);
  }
  return out;
}

}  // namespace

std::vector<Finding> gpuMemoryFindings(const core::Topology& topology, double minimumGiB) {
  // every GPU once (ranks may share one), by model
  std::map<std::string, std::vector<const core::RankRecord*>> byModel;
  std::map<std::string, bool> seen;
  for (const core::RankRecord& r : topology.ranks) {
    if (r.gpuMemoryBytes == 0 || r.gpuName.empty()) continue;
    const std::string id = r.gpuUuid.empty() ? fmt::format("{}/{}", r.node, r.gpuIndex) : r.gpuUuid;
    if (seen.emplace(id, true).second) byModel[modelOf(r.gpuName)].push_back(&r);
  }
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  std::vector<Finding> out;
  for (const auto& [model, gpus] : byModel) {
    std::uint64_t most = 0;
    for (const auto* g : gpus) most = std::max(most, g->gpuMemoryBytes);
    const auto full = std::count_if(gpus.begin(), gpus.end(), [&](const auto* g) { return g->gpuMemoryBytes == most; });
    for (const auto* g : gpus) {
      const double gib = static_cast<double>(g->gpuMemoryBytes) / kGiB;
      const bool belowOthers = static_cast<double>(g->gpuMemoryBytes) < 0.9 * static_cast<double>(most);
      const bool belowMinimum = minimumGiB > 0 && gib < minimumGiB;
      if (!belowOthers && !belowMinimum) continue;
      const std::string node = g->node < static_cast<int>(topology.nodes.size())
                                   ? topology.nodes[static_cast<std::size_t>(g->node)].name
                                   : g->hostname;
      Finding f = finding(FindingKind::kGpuMemory, Severity::kWarning, {node, g->node}, fmt::format("GPU {}", g->gpuIndex));
      f.rank = g->rank;
      f.measured = gib;
      f.expected = belowMinimum ? minimumGiB : static_cast<double>(most) / kGiB;
      f.ratio = f.measured / f.expected;
      f.unit = "GiB";
      f.message = belowOthers ? fmt::format("{} ({}): {:.0f} GiB where {} of the run's {} GPUs of this model have {:.0f} GiB",
                                            f.subject, g->gpuName, gib, full, gpus.size(), f.expected)
                              : fmt::format("{} ({}): {:.0f} GiB, below the {:g} GiB asked for", f.subject, g->gpuName,
                                            gib, minimumGiB);
      out.push_back(std::move(f));
    }
  }
  return out;
}

namespace {

// The GPU's PCIe record of `rank` on its node; null when the inventory does not hold it.
const core::PcieRecord* gpuOf(const core::Topology& topology, const core::RankRecord& rank) {
  if (rank.gpuBusId.empty()) return nullptr;
  const std::string bus = topologies::normalizeBusId(rank.gpuBusId);
  for (const core::PcieRecord& l : topology.inventory.pcie) {
    if (l.node == rank.node && l.gpu && topologies::normalizeBusId(l.busId) == bus) return &l;
  }
  return nullptr;
}

}  // namespace

std::vector<RankBinding> rankBindings(const core::Topology& topology) {
  std::vector<RankBinding> out;
  for (const core::RankRecord& r : topology.ranks) {
    const core::PcieRecord* gpu = gpuOf(topology, r);
    if (gpu == nullptr) continue;
    const auto allowed = core::parseRanks(r.cpus);
    const auto near = core::parseRanks(gpu->localCpus);
    if (!allowed || !near || allowed->empty() || near->empty()) continue;
    const auto inside = std::count_if(allowed->begin(), allowed->end(), [&](int cpu) {
      return std::binary_search(near->begin(), near->end(), cpu);
    });
    out.push_back({&r, gpu, allowed->size(), static_cast<std::size_t>(inside)});
  }
  return out;
}

std::vector<Finding> bindingFindings(const core::Topology& topology) {
  std::vector<Finding> out;
  for (const RankBinding& b : rankBindings(topology)) {
    if (b.near == b.cpus) continue;
    const core::RankRecord& r = *b.rank;
    const std::string node = r.node < static_cast<int>(topology.nodes.size())
                                 ? topology.nodes[static_cast<std::size_t>(r.node)].name
                                 : r.hostname;
    Finding f = finding(FindingKind::kBinding, b.near == 0 ? Severity::kWarning : Severity::kInfo, {node, r.node},
                        fmt::format("rank {}", r.rank));
    f.rank = r.rank;
    f.measured = static_cast<double>(b.near) / static_cast<double>(b.cpus);
    f.unit = "share of its CPUs near its GPU";
    f.message = fmt::format(
        "{}: may run on CPUs {} ({} of them near its GPU {}, whose CPUs are {}{}) - {}", f.subject, r.cpus, b.near,
        b.gpu->busId, b.gpu->localCpus, b.gpu->numaNode >= 0 ? fmt::format(", NUMA {}", b.gpu->numaNode) : "",
        b.near == 0 ? "bind each rank to its GPU's NUMA node (srun --cpu-bind, mpirun --map-by numa --bind-to numa)"
                    : "not bound: the scheduler may move it to the far socket");
    out.push_back(std::move(f));
  }
  return out;
}

// link_downed growing means the link went down and came back: error; other counters warning.
std::vector<Finding> linkErrorFindings(const Inventory& before, const Inventory& after, const InventorySubject& at) {
  std::vector<Finding> out;
  for (const topologies::CounterGrowth& g : topologies::counterGrowth(before, after)) {
    Finding f = finding(FindingKind::kLinkErrors, g.counter == "link_downed" ? Severity::kError : Severity::kWarning, at,
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
