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


// What a node's GPU pairs move, by GPU index: the better of a pair's transfer and its direct
// copies (a path that copies fast is fast, whatever NCCL made of it), and whether its samples
// agree (a copy has one).
struct GpuPairs {
  const core::Matrices& m;
  const AnalysisConfig& c;
  std::vector<int> rankOfGpu;  // the rank measuring with each GPU, -1 when none

  GpuPairs(const core::Matrices& matrices, const AnalysisConfig& config, const core::Topology& topo,
           const std::vector<int>& ranksOfNode, const core::NodeRecord& node)
      : m(matrices), c(config), rankOfGpu(static_cast<std::size_t>(std::max(node.gpuLinkCount(), 0)), -1) {
    const int ranks = std::max(m.rankUnidir.n, m.rankCopyUnidir.n);
    const int g = node.gpuLinkCount();
    for (int rank : ranksOfNode) {
      const core::RankRecord& r = topo.ranks[static_cast<std::size_t>(rank)];
      if (r.gpuIndex >= 0 && r.gpuIndex < g && r.rank < ranks) {
        rankOfGpu[static_cast<std::size_t>(r.gpuIndex)] = r.rank;
      }
    }
  }
  int rankOf(int gpu) const { return rankOfGpu[static_cast<std::size_t>(gpu)]; }
  // GPU a to GPU b; NaN when unmeasured (or a == b).
  float rate(int a, int b, bool& agrees) const {
    agrees = true;
    const int x = rankOf(a);
    const int y = rankOf(b);
    if (a == b || x < 0 || y < 0) return std::nanf("");
    float best = std::nanf("");
    if (m.rankUnidir.n > 0 && std::isfinite(m.rankUnidir.at(x, y))) {
      best = m.rankUnidir.at(x, y);
      agrees = core::worstAt(m.rankUnidirWorst, m.rankUnidir, x, y) >= c.agreement * best;
    }
    if (m.rankCopyUnidir.n > 0 && std::isfinite(m.rankCopyUnidir.at(x, y)) && !(m.rankCopyUnidir.at(x, y) <= best)) {
      best = m.rankCopyUnidir.at(x, y);
      agrees = true;
    }
    return best;
  }
  int gpus() const { return static_cast<int>(rankOfGpu.size()); }
  double fastest() const {
    double out = 0;
    for (int a = 0; a < gpus(); ++a) {
      for (int b = 0; b < gpus(); ++b) {
        bool agrees = true;
        const float v = rate(a, b, agrees);
        if (std::isfinite(v)) out = std::max(out, static_cast<double>(v));
      }
    }
    return out;
  }
};

// 1. A pair reported NVLink that moves no more than PCIe x16 carries is not on NVLink.
void nvlinkAtPcieSpeed(const core::NodeRecord& node, const GpuPairs& pairs, const core::Topology& topo,
                       std::vector<core::Finding>& findings) {
  const int g = pairs.gpus();
  for (int a = 0; a < g; ++a) {
    for (int b = a + 1; b < g; ++b) {
      const std::string& code = node.gpuLinks[static_cast<std::size_t>(a * g + b)];
      if (!code.starts_with("NV") || pairs.rankOf(a) < 0 || pairs.rankOf(b) < 0) continue;
      bool thereAgrees = true;
      bool backAgrees = true;
      const float there = pairs.rate(a, b, thereAgrees);
      const float back = pairs.rate(b, a, backAgrees);
      if (!std::isfinite(there) || !std::isfinite(back)) continue;
      // only a measurement whose samples agree says what the path is
      if (!thereAgrees || !backAgrees) continue;
      const double measured = std::min(there, back);
      const auto spec = topologies::gpuSpecForName(topo.ranks[static_cast<std::size_t>(pairs.rankOf(a))].gpuName);
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
}

// 2. An NVSwitch node where every GPU has one fast partner measures like bridged pairs.
void bridgedPairsOnNvswitch(const core::NodeRecord& node, const GpuPairs& pairs, std::vector<core::Finding>& findings) {
  const double fastest = pairs.fastest();
  if (node.topologyClass != "FULL_NVSWITCH" || pairs.gpus() < 4 || !(fastest > 0)) return;
  int withOnePartner = 0;
  int measuredGpus = 0;
  double others = 0;
  for (int a = 0; a < pairs.gpus(); ++a) {
    if (pairs.rankOf(a) < 0) continue;
    int fast = 0;
    int seen = 0;
    for (int b = 0; b < pairs.gpus(); ++b) {
      bool agrees = true;
      const float v = pairs.rate(a, b, agrees);
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
  if (measuredGpus < 4 || withOnePartner != measuredGpus) return;
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

void claimedVersusMeasured(const core::Matrices& m, const core::Topology& topo,
                           const std::vector<std::vector<int>>& ranksOf, const AnalysisConfig& c,
                           std::vector<core::Finding>& findings) {
  for (const core::NodeRecord& node : topo.nodes) {
    if (node.gpuLinkCount() < 2 || node.node < 0 || node.node >= static_cast<int>(ranksOf.size())) continue;
    const GpuPairs pairs(m, c, topo, ranksOf[static_cast<std::size_t>(node.node)], node);
    nvlinkAtPcieSpeed(node, pairs, topo, findings);
    bridgedPairsOnNvswitch(node, pairs, findings);
  }
}

}  // namespace

void claimedVsMeasuredRule(RuleContext& ctx, std::vector<Finding>& findings) {
  claimedVersusMeasured(ctx.m, ctx.topo, ctx.ranksOf, ctx.c, findings);
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
