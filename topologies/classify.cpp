// Topology classification (see classify.h and topologies/README.md for the edge cases).
#include "topologies/classify.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

namespace fabricmap::topologies {
namespace {

bool isNvLink(const Link& link) { return link.kind == LinkKind::kNvLink && link.nvlinks > 0; }

// The NVLinks one GPU can have. Only a known model narrows the bound below the largest any GPU
// has; a node mixing models (or naming none) gets the largest, so a switch is never claimed on a
// guess.
int linkBoundFor(const GpuTopology& topo) {
  std::set<int> bounds;
  for (const GpuInfo& gpu : topo.gpus) {
    const std::optional<GpuSpec> spec = gpu.name.empty() ? std::nullopt : gpuSpecForName(gpu.name);
    if (!spec || spec->nvlinksPerGpu <= 0) return kMaxNvLinksPerGpu;
    bounds.insert(spec->nvlinksPerGpu);
  }
  return bounds.size() == 1 ? *bounds.begin() : kMaxNvLinksPerGpu;
}

std::string countsText(const std::set<int>& counts) {
  if (counts.empty()) return "none";
  if (counts.size() == 1) return fmt::format("NV{}", *counts.begin());
  return fmt::format("NV{}-NV{}", *counts.begin(), *counts.rbegin());
}

std::string gpuList(const std::vector<int>& gpus) {
  std::vector<std::string> names;
  for (const int g : gpus) names.push_back(fmt::format("GPU{}", g));
  return fmt::format("{}", fmt::join(names, ", "));
}

// Connected components of the NVLink graph, each sorted, in order of their lowest GPU; GPUs with
// no NVLink are left out.
std::vector<std::vector<int>> nvlinkComponents(const GpuTopology& topo) {
  const int n = topo.gpuCount();
  std::vector<int> component(static_cast<std::size_t>(n), -1);
  std::vector<std::vector<int>> groups;
  for (int start = 0; start < n; ++start) {
    if (component[start] >= 0) continue;
    std::vector<int> group;
    std::vector<int> stack = {start};
    component[start] = static_cast<int>(groups.size());
    while (!stack.empty()) {
      const int g = stack.back();
      stack.pop_back();
      group.push_back(g);
      for (int p = 0; p < n; ++p) {
        if (p != g && component[p] < 0 && isNvLink(topo.gpuLinks[g][p])) {
          component[p] = component[start];
          stack.push_back(p);
        }
      }
    }
    std::sort(group.begin(), group.end());
    groups.push_back(group);
  }
  std::erase_if(groups, [](const std::vector<int>& g) { return g.size() < 2; });
  return groups;
}

// Per GPU, how many peers' links satisfy `test`.
std::vector<int> peersWhere(const GpuTopology& topo, const std::function<bool(const Link&)>& test) {
  const int n = topo.gpuCount();
  std::vector<int> count(static_cast<std::size_t>(n), 0);
  for (int g = 0; g < n; ++g) {
    for (int p = 0; p < n; ++p) {
      if (p != g && test(topo.gpuLinks[g][p])) ++count[g];
    }
  }
  return count;
}

std::vector<int> gpusWith(const std::vector<int>& values, int value) {
  std::vector<int> gpus;
  for (int g = 0; g < static_cast<int>(values.size()); ++g) {
    if (values[g] == value) gpus.push_back(g);
  }
  return gpus;
}

bool isClique(const GpuTopology& topo, const std::vector<int>& group) {
  for (const int a : group) {
    for (const int b : group) {
      if (a != b && !isNvLink(topo.gpuLinks[a][b])) return false;
    }
  }
  return true;
}

}  // namespace

std::string_view className(TopologyClass c) {
  switch (c) {
    case TopologyClass::kFullNvSwitch: return "FULL_NVSWITCH";
    case TopologyClass::kNvLinkDirectMesh: return "NVLINK_DIRECT_MESH";
    case TopologyClass::kNvLinkPairs: return "NVLINK_PAIRS";
    case TopologyClass::kNvLinkPartialMesh: return "NVLINK_PARTIAL_MESH";
    case TopologyClass::kPcieOnly: return "PCIE_ONLY";
    case TopologyClass::kSingleGpu: return "SINGLE_GPU";
    case TopologyClass::kNoGpu: return "NO_GPU";
  }
  return "UNCLASSIFIED";
}

std::optional<TopologyClass> classFromName(std::string_view name) {
  for (const TopologyClass c :
       {TopologyClass::kFullNvSwitch, TopologyClass::kNvLinkDirectMesh, TopologyClass::kNvLinkPairs,
        TopologyClass::kNvLinkPartialMesh, TopologyClass::kPcieOnly, TopologyClass::kSingleGpu,
        TopologyClass::kNoGpu}) {
    if (className(c) == name) return c;
  }
  return std::nullopt;
}

NearestNic nearestNic(const GpuTopology& topo, int gpu) {
  NearestNic best;
  best.gpu = gpu;
  const bool anyRdma =
      std::any_of(topo.nics.begin(), topo.nics.end(), [](const NicInfo& nic) { return nic.rdma; });
  // A plain Ethernet port (the management interface) is not where GPU traffic goes when the node
  // has RDMA NICs; without any, no NIC is anyone's nearest.
  if (!anyRdma) return best;
  for (int n = 0; n < static_cast<int>(topo.nics.size()); ++n) {
    if (!topo.nics[n].rdma) continue;
    const LinkKind path = topo.gpuNic[gpu][n];
    const bool better = best.nic < 0 || pcieRank(path) < pcieRank(best.path) ||
                        (path == best.path && topo.nics[n].rateGbps > topo.nics[best.nic].rateGbps);
    if (better) {
      best.nic = n;
      best.path = path;
    }
  }
  // A NIC at an unknown distance is no better than none: naming it would look like a finding.
  if (best.path == LinkKind::kUnknown) best.nic = -1;
  best.gpuDirect = best.path == LinkKind::kPix || best.path == LinkKind::kPxb;
  return best;
}

namespace {

// What the link matrix says: NVLink pairs, their counts, each GPU's summed count.
struct LinkCensus {
  int pairs = 0;
  int nvPairs = 0;
  int unknownPairs = 0;
  std::set<int> counts;       // NVLink counts of the NVLink pairs
  std::vector<int> linkSum;   // per GPU, its NVLinks summed over its peers
  std::vector<std::string> noP2p;
};

LinkCensus censusOf(const GpuTopology& topo) {
  const int n = topo.gpuCount();
  LinkCensus k;
  k.linkSum.assign(static_cast<std::size_t>(n), 0);
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      const Link& link = topo.gpuLinks[a][b];
      if (isNvLink(link)) k.linkSum[a] += link.nvlinks;
      if (b < a) continue;
      ++k.pairs;
      if (isNvLink(link)) {
        ++k.nvPairs;
        k.counts.insert(link.nvlinks);
      }
      if (link.kind == LinkKind::kUnknown) ++k.unknownPairs;
      if (link.p2p == Tristate::kNo) k.noP2p.push_back(fmt::format("GPU{}-GPU{}", a, b));
    }
  }
  return k;
}

// Warnings about the GPUs' nearest NICs and their inactive NVLinks: one per cause, naming every
// GPU it concerns (eight GPUs behind one far NIC are one problem, not eight).
void gpuWarnings(const GpuTopology& topo, Classification& c) {
  const int n = topo.gpuCount();
  // in the order of each group's first GPU: (NIC, path) -> GPUs, inactive NVLinks -> GPUs
  std::vector<std::pair<std::pair<int, LinkKind>, std::vector<int>>> farNics;
  std::vector<std::pair<int, std::vector<int>>> inactive;
  const auto addTo = [](auto& groups, const auto& key, int gpu) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == key; });
    if (it == groups.end()) it = groups.insert(groups.end(), {key, {}});
    it->second.push_back(gpu);
  };
  for (int g = 0; g < n; ++g) {
    NearestNic nic = nearestNic(topo, g);
    if (nic.nic >= 0 &&
        (nic.path == LinkKind::kPhb || nic.path == LinkKind::kNode || nic.path == LinkKind::kSys)) {
      addTo(farNics, std::pair(nic.nic, nic.path), g);
    }
    c.nearestNics.push_back(nic);
    if (topo.gpus[g].nvlinksInactive > 0) addTo(inactive, topo.gpus[g].nvlinksInactive, g);
  }
  for (const auto& [where, gpus] : farNics) {
    c.warnings.push_back(fmt::format(
        "{} nearest NIC {} is {}: GPUDirect RDMA would cross the CPU, so NCCL stages "
        "through host memory by default and inter-node bandwidth may fall short",
        gpus.size() == 1 ? gpuList(gpus) + "'s" : gpuList(gpus) + ": their",
        topo.nics[static_cast<std::size_t>(where.first)].name, linkKindName(where.second)));
  }
  for (const auto& [links, gpus] : inactive) {
    c.warnings.push_back(fmt::format("{} {} {} NVLink(s) that are not active", gpuList(gpus),
                                     gpus.size() == 1 ? "has" : "each have", links));
  }
}

// "the 6 NVLinks of each V100 SXM2", or, with no GPU model in the source, the most any GPU has.
std::string linkBoundText(const GpuTopology& topo, int bound) {
  std::set<std::string_view> models;
  for (const GpuInfo& gpu : topo.gpus) {
    const std::optional<GpuSpec> spec = gpu.name.empty() ? std::nullopt : gpuSpecForName(gpu.name);
    models.insert(spec && spec->nvlinksPerGpu == bound ? spec->model : std::string_view());
  }
  if (models.size() == 1 && !models.begin()->empty()) {
    return fmt::format("the {} NVLinks of each {}", bound, *models.begin());
  }
  return fmt::format("the {} NVLinks of the GPUs that have the most (H100, H200, B200: this source names no GPU model)",
                     bound);
}

// Is there an NVSwitch? NVML knows; otherwise only link counts that no GPU could have alone
// prove one. Sums that fit are a direct mesh or a switch the text cannot show, so "unknown".
void judgeNvswitch(const GpuTopology& topo, const LinkCensus& k, Classification& c) {
  const auto exceeding = std::max_element(k.linkSum.begin(), k.linkSum.end());
  const int maxGpu = static_cast<int>(exceeding - k.linkSum.begin());
  if (topo.nvswitch == Tristate::kYes) {
    c.nvswitch = Tristate::kYes;
    c.nvswitchEvidence = "NVML reports NVLinks to an NVSwitch";
  } else if (*exceeding > c.linkBound) {
    c.nvswitch = Tristate::kYes;
    c.nvswitchEvidence = fmt::format("GPU{}'s per-pair NVLink counts sum to {}, more than {}", maxGpu,
                                     *exceeding, linkBoundText(topo, c.linkBound));
    if (topo.nvswitch == Tristate::kNo) {
      c.warnings.push_back("NVML reports no NVSwitch, but the NVLink counts need one");
    }
  } else if (topo.nvswitch == Tristate::kNo) {
    c.nvswitch = Tristate::kNo;
    c.nvswitchEvidence = "NVML reports no NVLink to an NVSwitch";
  } else if (k.nvPairs == 0) {
    c.nvswitch = Tristate::kNo;
    c.nvswitchEvidence = "no NVLink";
  } else {
    c.nvswitch = Tristate::kUnknown;
    c.nvswitchEvidence = fmt::format(
        "every GPU's NVLink counts fit within {}: direct links, or a switch the source cannot show",
        linkBoundText(topo, c.linkBound));
  }
}

// Some GPU pairs NVLink without a switch: NVLink pairs (cliques, PCIe between them) or a partial mesh.
void classifyUnswitchedPartial(const GpuTopology& topo, const LinkCensus& k, Classification& c) {
  const int n = topo.gpuCount();
  const int pairs = k.pairs;
  const int nvPairs = k.nvPairs;
  const std::set<int>& counts = k.counts;
  const std::vector<int>& linkSum = k.linkSum;
  const bool cliques =
      std::all_of(c.nvlinkGroups.begin(), c.nvlinkGroups.end(),
                  [&topo](const std::vector<int>& g) { return isClique(topo, g); });
  std::vector<std::string> groupNames;
  for (const std::vector<int>& g : c.nvlinkGroups) {
    groupNames.push_back(fmt::format("{{{}}}", fmt::join(g, ",")));
  }
  if (cliques) {
    c.topologyClass = TopologyClass::kNvLinkPairs;
    c.summary = fmt::format("NVLink ({}) only inside {} ({} of {} pairs), PCIe elsewhere",
                            countsText(counts), fmt::join(groupNames, " "), nvPairs, pairs);
    std::vector<int> alone;
    for (int g = 0; g < n; ++g) {
      if (linkSum[g] == 0) alone.push_back(g);
    }
    if (!alone.empty()) {
      c.warnings.push_back(
          fmt::format("{} without an NVLink partner: PCIe to every peer", gpuList(alone)));
    }
  } else {
    c.topologyClass = TopologyClass::kNvLinkPartialMesh;
    c.summary = fmt::format(
        "{} of {} GPU pairs NVLink ({}), the NVLink graph {} but not complete", nvPairs, pairs,
        countsText(counts),
        c.nvlinkGroups.size() == 1 && c.nvlinkGroups[0].size() == static_cast<std::size_t>(n)
            ? "connected"
            : "partly connected");
  }
}

// The class from the NVLink graph: none, all pairs (switched, a direct mesh, or one bridge), or
// some (pairs, or a partial mesh), with the warnings a degraded node gets.
void classifyShape(const GpuTopology& topo, const LinkCensus& k, Classification& c) {
  const int n = topo.gpuCount();
  const int pairs = k.pairs;
  const int nvPairs = k.nvPairs;
  const std::set<int>& counts = k.counts;
  const bool switched = c.nvswitch == Tristate::kYes;
  c.nvlinkGroups = nvlinkComponents(topo);
  if (nvPairs == 0) {
    c.topologyClass = TopologyClass::kPcieOnly;
    c.summary = fmt::format("no NVLink between any of the {} GPUs", n);
  } else if (nvPairs == pairs) {
    if (switched) {
      c.topologyClass = TopologyClass::kFullNvSwitch;
      c.summary = fmt::format("all {} GPU pairs NVLink ({}) through an NVSwitch", pairs,
                              countsText(counts));
      if (counts.size() > 1) {
        // A healthy switched node shows each GPU's whole link count to every peer. A GPU with
        // links down shows fewer to all its peers, and each peer fewer to it alone, so the GPUs
        // short to the most peers are the ones to name.
        const int full = *counts.rbegin();
        const std::vector<int> shortPeers =
            peersWhere(topo, [full](const Link& l) { return l.nvlinks < full; });
        const int worst = *std::max_element(shortPeers.begin(), shortPeers.end());
        c.degraded = true;
        c.warnings.push_back(fmt::format(
            "unequal NVLink counts on an NVSwitch node ({}): {} with fewer than NV{} to {} of {} "
            "peers, NVLinks may be down",
            countsText(counts), gpuList(gpusWith(shortPeers, worst)), full, worst, n - 1));
      }
    } else if (n >= 3) {
      // the class's rule: no switch that the counts need (one they do not need cannot be seen)
      c.topologyClass = TopologyClass::kNvLinkDirectMesh;
      c.summary = fmt::format("all {} GPU pairs NVLink ({}) directly{}", pairs, countsText(counts),
                              c.nvswitch == Tristate::kNo ? ", no switch" : ": the link counts need no switch");
    } else {
      c.topologyClass = TopologyClass::kNvLinkPairs;
      c.summary = fmt::format("one NVLink pair ({}), a bridge", countsText(counts));
    }
  } else if (switched) {
    // Links an NVSwitch node should have are missing: not a full mesh, and not bridges either.
    c.topologyClass = TopologyClass::kNvLinkPartialMesh;
    c.degraded = true;
    const std::vector<int> without = peersWhere(topo, [](const Link& l) { return !isNvLink(l); });
    const int worst = *std::max_element(without.begin(), without.end());
    c.summary = fmt::format("{} of {} GPU pairs NVLink on an NVSwitch node: not a full mesh",
                            nvPairs, pairs);
    c.warnings.push_back(fmt::format(
        "NVSwitch node is not a full NVLink mesh: {} without NVLink to {} of {} peers (NVLinks "
        "down, or GPUs outside the NVLink fabric)",
        gpuList(gpusWith(without, worst)), worst, n - 1));
  } else {
    classifyUnswitchedPartial(topo, k, c);
  }
}

}  // namespace

Classification classify(const GpuTopology& topo) {
  Classification c;
  c.warnings = topo.warnings;
  const int n = topo.gpuCount();
  c.linkBound = linkBoundFor(topo);
  gpuWarnings(topo, c);
  if (n == 0) {
    c.topologyClass = TopologyClass::kNoGpu;
    c.nvswitch = topo.nvswitch;
    c.nvswitchEvidence = "no GPUs";
    c.summary = "no GPUs";
    return c;
  }
  if (n == 1) {
    c.topologyClass = TopologyClass::kSingleGpu;
    c.nvswitch = topo.nvswitch;
    c.nvswitchEvidence = topo.nvswitch == Tristate::kUnknown ? "one GPU, no NVLink peers" : "NVML";
    c.summary = "one GPU";
    return c;
  }

  const LinkCensus k = censusOf(topo);
  if (k.unknownPairs > 0) {
    c.warnings.push_back(
        fmt::format("{} of {} GPU pairs have no link information; they are counted as not NVLink",
                    k.unknownPairs, k.pairs));
  }
  if (!k.noP2p.empty()) {
    c.warnings.push_back(fmt::format(
        "no CUDA peer-to-peer access between {}: their traffic goes through host memory",
        fmt::join(k.noP2p, ", ")));
  }

  judgeNvswitch(topo, k, c);
  classifyShape(topo, k, c);
  return c;
}

}  // namespace fabricmap::topologies
