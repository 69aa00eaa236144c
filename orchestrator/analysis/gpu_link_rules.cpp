// What a node's GPU links claim against what its GPU pairs move, and what its topology class means
// for tensor parallelism; see rules.h.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/units.h"
#include "orchestrator/analysis/rules.h"
#include "topologies/specs.h"

namespace fabricmap::orchestrator::internal {
namespace {

// What a class other than FULL_NVSWITCH means for tensor parallelism (TP all-reduces every layer).
std::string tensorParallelMeaning(const std::string& cls) {
  if (cls == "NVLINK_PAIRS") {
    return "NVLink only within pairs: a tensor-parallel group larger than 2 GPUs crosses PCIe every layer";
  }
  if (cls == "PCIE_ONLY") return "no NVLink: tensor-parallel all-reduces run over PCIe (tens of GB/s, not hundreds)";
  if (cls == "NVLINK_PARTIAL_MESH") {
    return "NVLink between some GPU pairs only: tensor-parallel groups must follow the NVLink groups, "
           "others cross PCIe";
  }
  if (cls == "NVLINK_DIRECT_MESH") {
    return "direct NVLinks, no switch: each pair has a share of a GPU's links, less per pair than NVSwitch";
  }
  return {};
}


void claimedVersusMeasured(const core::Matrices& m, const core::Topology& topo, const AnalysisConfig& c,
                           std::vector<core::Finding>& findings) {
  const int ranks = std::max(m.rankUnidir.n, m.rankCopyUnidir.n);
  // What a GPU pair moves: the better of its NCCL transfer and its direct copies (a path that
  // copies fast is fast, whatever NCCL made of it). `agrees`: its samples agree (a copy has one).
  const auto pairRate = [&](int x, int y, bool& agrees) {
    float best = std::nanf("");
    agrees = true;
    if (m.rankUnidir.n > 0 && std::isfinite(m.rankUnidir.at(x, y))) {
      best = m.rankUnidir.at(x, y);
      agrees = core::worstAt(m.rankUnidirWorst, m.rankUnidir, x, y) >= c.agreement * best;
    }
    if (m.rankCopyUnidir.n > 0 && std::isfinite(m.rankCopyUnidir.at(x, y)) &&
        !(m.rankCopyUnidir.at(x, y) <= best)) {
      best = m.rankCopyUnidir.at(x, y);
      agrees = true;
    }
    return best;
  };
  for (const core::NodeRecord& node : topo.nodes) {
    const int g = node.gpuLinkCount();
    // the ranks of this node measuring with its GPUs, by GPU index
    std::vector<int> rankOfGpu(static_cast<std::size_t>(std::max(g, 0)), -1);
    for (const auto& r : topo.ranks) {
      if (r.node == node.node && r.gpuIndex >= 0 && r.gpuIndex < g && r.rank < ranks) {
        rankOfGpu[static_cast<std::size_t>(r.gpuIndex)] = r.rank;
      }
    }
    // 1. a pair reported NVLink that moves no more than PCIe x16 carries is not on NVLink
    double fastest = 0;
    for (int a = 0; a < g; ++a) {
      for (int b = 0; b < g; ++b) {
        const int ra = rankOfGpu[static_cast<std::size_t>(a)];
        const int rb = rankOfGpu[static_cast<std::size_t>(b)];
        bool agrees = true;
        const float v = a != b && ra >= 0 && rb >= 0 ? pairRate(ra, rb, agrees) : std::nanf("");
        if (std::isfinite(v)) fastest = std::max(fastest, static_cast<double>(v));
      }
    }
    for (int a = 0; a < g; ++a) {
      for (int b = a + 1; b < g; ++b) {
        const std::string& code = node.gpuLinks[static_cast<std::size_t>(a * g + b)];
        const int ra = rankOfGpu[static_cast<std::size_t>(a)];
        const int rb = rankOfGpu[static_cast<std::size_t>(b)];
        if (!code.starts_with("NV") || ra < 0 || rb < 0) continue;
        bool thereAgrees = true;
        bool backAgrees = true;
        const float there = pairRate(ra, rb, thereAgrees);
        const float back = pairRate(rb, ra, backAgrees);
        if (!std::isfinite(there) || !std::isfinite(back)) continue;
        // only a measurement whose samples agree says what the path is
        if (!thereAgrees || !backAgrees) continue;
        const double measured = std::min(there, back);
        const auto spec = topologies::gpuSpecForName(topo.ranks[static_cast<std::size_t>(ra)].gpuName);
        const int generation = spec && spec->pcieGeneration > 0 ? spec->pcieGeneration : 5;
        const double pcie = topologies::pcieX16GBps(generation).value_or(64.0);
        if (measured > pcie) continue;
        Finding f;
        f.severity = core::Severity::kError;
        f.kind = core::FindingKind::kClaimedVsMeasured;
        f.nodeA = node.node;
        f.subject = fmt::format("{} GPU{}-GPU{}", node.name, a, b);
        f.measured = measured;
        f.expected = pcie;
        f.ratio = measured / pcie;
        f.unit = "GB/s";
        f.message = fmt::format(
            "{}: GPU{}-GPU{} reported {} but measured {}, no more than PCIe x16 Gen{} carries ({}): "
            "not an NVLink path - check NVLink state (nvidia-smi nvlink -s) and the fabric manager",
            node.name, a, b, code, core::formatRate(measured), generation, core::formatRate(pcie));
        findings.push_back(std::move(f));
      }
    }
    // 2. an NVSwitch node where every GPU has one fast partner measures like bridged pairs
    if (node.topologyClass == "FULL_NVSWITCH" && g >= 4 && fastest > 0) {
      int withOnePartner = 0;
      int measuredGpus = 0;
      double others = 0;
      for (int a = 0; a < g; ++a) {
        const int ra = rankOfGpu[static_cast<std::size_t>(a)];
        if (ra < 0) continue;
        int fast = 0;
        int seen = 0;
        for (int b = 0; b < g; ++b) {
          const int rb = rankOfGpu[static_cast<std::size_t>(b)];
          bool agrees = true;
          const float v = b == a || rb < 0 ? std::nanf("") : pairRate(ra, rb, agrees);
          if (!std::isfinite(v)) continue;
          ++seen;
          if (v >= 0.5 * fastest) {
            ++fast;
          } else {
            others = std::max(others, static_cast<double>(v));
          }
        }
        if (seen == 0) continue;
        ++measuredGpus;
        withOnePartner += fast == 1;
      }
      if (measuredGpus >= 4 && withOnePartner == measuredGpus) {
        Finding f;
        f.severity = core::Severity::kError;
        f.kind = core::FindingKind::kClaimedVsMeasured;
        f.nodeA = node.node;
        f.subject = node.name;
        f.measured = others;
        f.expected = fastest;
        f.ratio = others / fastest;
        f.unit = "GB/s";
        f.message = fmt::format(
            "{}: reported FULL_NVSWITCH, but every GPU has one fast partner ({}) and reaches the "
            "others at {} at most: it behaves like NVLink-bridged pairs",
            node.name, core::formatRate(fastest), core::formatRate(others));
        findings.push_back(std::move(f));
      }
    }
  }
}

}  // namespace

void claimedVsMeasuredRule(RuleContext& ctx, std::vector<Finding>& findings) {
  claimedVersusMeasured(ctx.m, ctx.topo, ctx.c, findings);
}

// What a node's topology class means for tensor parallelism, once per class.
void topologyRule(RuleContext& ctx, std::vector<Finding>& findings) {
  std::map<std::string, std::vector<std::string>> byClass;  // class -> nodes
  for (const core::NodeRecord& node : ctx.topo.nodes) {
    if (node.gpuLinkCount() >= 2) byClass[node.topologyClass].push_back(node.name);
  }
  for (const auto& [cls, nodes] : byClass) {
    const std::string meaning = tensorParallelMeaning(cls);
    if (meaning.empty()) continue;
    Finding f;
    f.severity = cls == "NVLINK_DIRECT_MESH" ? core::Severity::kInfo : core::Severity::kWarning;
    f.kind = core::FindingKind::kTopology;
    const std::vector<std::string> named(nodes.begin(), nodes.begin() + static_cast<long>(std::min<std::size_t>(nodes.size(), 3)));
    f.subject = nodes.size() == 1 ? nodes.front()
                                  : fmt::format("{} nodes ({}{})", nodes.size(), fmt::join(named, ", "),
                                                nodes.size() > named.size() ? ", ..." : "");
    f.measured = static_cast<double>(nodes.size());
    f.message = fmt::format("{} {} {}: {}", f.subject, nodes.size() == 1 ? "is" : "are", cls, meaning);
    findings.push_back(std::move(f));
  }
}

}  // namespace fabricmap::orchestrator::internal
