// Latency between nodes (a node most of whose peers see it high, else single pairs) and bandwidth
// inside nodes (slow same-node pairs per node and link class); see rules.h.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "core/stats.h"
#include "core/units.h"
#include "orchestrator/analysis/plateau.h"
#include "orchestrator/analysis/rules.h"

namespace fabricmap::orchestrator::internal {
namespace {

// Latency: a node most of whose peers see high latency, else single pairs.
void latencyFindings(const core::Matrices& m, const core::Topology& topo, const AnalysisConfig& c,
                     const core::Expected& nb, NoisyPairs& noisy, std::vector<Finding>& findings) {
  if (!std::isfinite(nb.latency) || nb.latency <= 0) return;
  const JudgedMatrix v = viewOf(m.nodeLatency, m.nodeLatencyWorst, m.nodeCv, &judgeLatency, Baseline{nb, nb}, c, noisy, topo);
  std::set<int> named;
  for (const auto& [x, y] : slowPairs(v, [](int, int) { return true; })) {
    for (int end : {x, y}) {
      if (named.count(end)) continue;
      const Evidence e = directionOf(v, end, true);
      if (e.judged < 2 || e.share() < c.attributeShare) continue;
      named.insert(end);
      Finding f;
      f.kind = core::FindingKind::kNodeLatency;
      f.nodeA = end;
      f.subject = nodeName(topo, end);
      f.measured = core::median(e.values);
      f.expected = nb.latency;
      f.ratio = f.measured / f.expected;
      f.unit = "us";
      f.severity = latencySeverity(f.ratio, c.latencyFactor);
      f.message = fmt::format("{}: latency to {} of {} peers {:.1f} us vs {:.1f} us baseline ({:.1f}x)", f.subject,
                              e.slow, e.judged, f.measured, f.expected, f.ratio);
      // the latency matrix is symmetric: the rest of the fabric is the pairs without `end`, once each way
      setConfidence(f, e, restIsClean(v, e, e), true);
      findings.push_back(std::move(f));
    }
  }
  // A single pair's latency must stand out of the final figures' own variation: ping-pongs on a
  // busy host vary several-fold without a fault.
  std::vector<float> finalLatencies;
  m.nodeLatency.forEachCell([&](int x, int y, float l) {
    if (x < y) finalLatencies.push_back(l);
  });
  const Robust finalFigures = robustStats(std::move(finalLatencies), false);
  for (const auto& [x, y] : slowPairs(v, [](int a, int b) { return a < b; })) {
    if (named.count(x) || named.count(y)) continue;
    Evidence e;
    e.add(v.at(x, y), m.nodeLatency.at(x, y));
    Finding f;
    f.kind = core::FindingKind::kLinkLatency;
    f.nodeA = x;
    f.nodeB = y;
    f.subject = nodeName(topo, x) + " <-> " + nodeName(topo, y);
    f.measured = m.nodeLatency.at(x, y);
    f.expected = nb.latency;
    f.ratio = f.measured / f.expected;
    f.unit = "us";
    f.severity = latencySeverity(f.ratio, c.latencyFactor);
    f.message = fmt::format("{}: latency {:.1f} us vs {:.1f} us baseline ({:.1f}x)", f.subject, f.measured, f.expected,
                            f.ratio);
    setConfidence(f, e, outsideVariation(f.measured, finalFigures, false), false);
    findings.push_back(std::move(f));
  }
}

// Inside nodes: slow same-node pairs, one finding per node and link class (each class is judged
// against its own baseline: NVLink pairs against NVLink pairs, PCIe against PCIe).
void intraNodeFindings(const core::Matrices& m, const core::Topology& topo,
                       const std::vector<std::vector<int>>& ranksOf, const AnalysisConfig& c,
                       const std::array<Baseline, core::kLinkClasses>& classJudge, NoisyPairs& noisy,
                       std::vector<Finding>& findings) {
  // The class's own variation in the final (best) figures: a node's pairs within it are as likely
  // the host's scheduling as its links (a class measures few pairs per node, and its first
  // samples, which fixed the bar, may have been steadier than its retests).
  std::array<Robust, core::kLinkClasses> finalFigures{};
  for (std::size_t cls = 1; cls < core::kLinkClasses; ++cls) {
    std::vector<float> v;
    sampleOf(m.rankUnidir, [&](int a, int b, float x) {
      if (m.rankLinkClass.at(a, b) == static_cast<LinkClass>(cls)) v.push_back(x);
    });
    finalFigures[cls] = robustStats(std::move(v), true);
  }
  if (m.rankLinkClass.n != m.rankUnidir.n || m.rankUnidir.n != static_cast<int>(topo.ranks.size())) return;
  std::map<std::pair<int, LinkClass>, Evidence> intra;
  std::map<std::pair<int, LinkClass>, std::set<std::pair<int, int>>> slowPairsOf;
  for (std::size_t node = 0; node < topo.nodes.size(); ++node) {
    const std::vector<int>& ranks = ranksOf[node];
    for (int a : ranks) {
      for (int b : ranks) {
        const LinkClass cls = m.rankLinkClass.at(a, b);
        const float val = m.rankUnidir.at(a, b);
        if (a == b || cls == LinkClass::kInterNode || cls == LinkClass::kSelf || !std::isfinite(val)) continue;
        const float worst = core::worstAt(m.rankUnidirWorst, m.rankUnidir, a, b);
        const float cv = core::cellOr(m.rankCv, a, b);
        const Judged j = judgeBw(val, worst, cv, classJudge[static_cast<std::size_t>(cls)].forCell(cv), c);
        intra[{static_cast<int>(node), cls}].add(j, val);
        if (j.verdict == Verdict::kSlow) slowPairsOf[{static_cast<int>(node), cls}].emplace(a, b);
        if (j.verdict == Verdict::kNoisy) noisy.note(fmt::format("rank {} -> {}", a, b), val, worst, "GB/s");
      }
    }
  }
  for (const auto& [key, e] : intra) {
    const auto& [node, cls] = key;
    if (e.slow == 0) continue;
    const core::Expected& base = classJudge[static_cast<std::size_t>(cls)].fixed;
    Finding f;
    f.kind = core::FindingKind::kIntraNode;
    f.nodeA = node;
    f.subject = nodeName(topo, node);
    f.measured = core::median(e.slowValues);
    f.expected = base.bandwidth;
    f.ratio = f.measured / f.expected;
    f.unit = "GB/s";
    f.severity = severityFor(f.ratio);
    f.message = fmt::format(
        "{}: {} of {} directed {} pairs inside the node at {} vs {} baseline ({:.2f}x) - check its intra-node path "
        "(NVLink state, PCIe topology, NUMA placement, CPU binding)",
        f.subject, e.slow, e.judged, core::name(cls), core::formatRate(f.measured), core::formatRate(f.expected),
        f.ratio);
    // A GPU link that is down or trained low is slow both ways; one direction slow alone is as
    // likely the host's scheduling: half the margin.
    const auto& slowPairs = slowPairsOf[key];
    const auto bothWays = std::count_if(slowPairs.begin(), slowPairs.end(),
                                        [&](const auto& p) { return slowPairs.count({p.second, p.first}) > 0; });
    const double outside = outsideVariation(f.measured, finalFigures[static_cast<std::size_t>(cls)], true);
    setConfidence(f, e, outside * (0.5 + 0.5 * static_cast<double>(bothWays) / static_cast<double>(slowPairs.size())),
                  false);
    findings.push_back(std::move(f));
  }
}

// What node `node`'s NICs carry, GB/s: the declared line rate, else the sum of its active RDMA
// ports' rates in the inventory (0: not known, and nothing is judged).
double lineRateOf(const core::Topology& topo, double declaredGBps, int node) {
  if (declaredGBps > 0) return declaredGBps;
  double gbps = 0;
  for (const core::NicRecord& n : topo.inventory.nics) {
    if (n.node == node && n.activeRdma() && n.rateGbps > 0) gbps += n.rateGbps;
  }
  return gbps / 8;
}

}  // namespace

// below_line_rate: a node whose share of its line rate (lineRateShares) is under
// --line-rate-fraction, however equally slow every node is.
void belowLineRateRule(RuleContext& ctx, std::vector<Finding>& findings) {
  const double bar = ctx.c.lineRateFraction;
  for (const LineRateShare& node : lineRateShares(ctx.m, ctx.topo, ctx.c.lineRateGBps)) {
    if (node.share() >= bar) continue;
    Finding f;
    f.kind = core::FindingKind::kBelowLineRate;
    f.nodeA = node.node;
    f.subject = nodeName(ctx.topo, node.node);
    f.measured = node.medianGBps;
    f.expected = node.lineGBps;
    f.ratio = node.share();
    f.unit = "GB/s";
    f.severity = f.ratio < bar / 2 ? core::Severity::kError : core::Severity::kWarning;
    const auto below = std::count_if(node.shares.begin(), node.shares.end(), [&](double r) { return r < bar; });
    const auto pairs = node.shares.size();
    f.confidence = static_cast<double>(below) / static_cast<double>(pairs) * (pairs >= 2 ? 1.0 : 0.5);
    f.message = fmt::format(
        "{}: {:.2f} GB/s to and from its peers (median of {} node pairs, {} below the bar) is {:.2f}x of the {:.2f} GB/s "
        "{}, below {:.2f} - check the NICs' firmware and settings, the ranks' NIC binding and the fabric's rate; "
        "confidence {:.2f}",
        f.subject, f.measured, pairs, below, f.ratio, f.expected, lineRateSource(ctx.topo, ctx.c.lineRateGBps, node.node),
        bar, f.confidence);
    findings.push_back(std::move(f));
  }
}

void latencyRule(RuleContext& ctx, std::vector<Finding>& findings) {
  latencyFindings(ctx.m, ctx.topo, ctx.c, ctx.nodeBase, ctx.noisyNodes, findings);
}

void intraNodeRule(RuleContext& ctx, std::vector<Finding>& findings) {
  intraNodeFindings(ctx.m, ctx.topo, ctx.ranksOf, ctx.c, ctx.classJudge, ctx.noisyRanks, findings);
}

}  // namespace fabricmap::orchestrator::internal

namespace fabricmap::orchestrator {

double LineRateShare::share() const { return core::median(shares); }

std::vector<LineRateShare> lineRateShares(const core::Matrices& m, const core::Topology& topology, double declaredGBps) {
  const core::Matrix& bw = m.nodeBw;
  const bool wholeNodes = m.nodeMeasured || std::all_of(topology.nodes.begin(), topology.nodes.end(),
                                                        [](const core::NodeRecord& n) { return n.ranks == 1; });
  std::vector<LineRateShare> out;
  if (!wholeNodes || bw.n < 2) return out;
  std::vector<double> line;
  for (int x = 0; x < bw.n; ++x) line.push_back(internal::lineRateOf(topology, declaredGBps, x));
  for (int x = 0; x < bw.n; ++x) {
    LineRateShare node;
    node.node = x;
    node.lineGBps = line[static_cast<std::size_t>(x)];
    if (node.lineGBps <= 0) continue;
    std::vector<double> values;
    bw.forEachCell([&](int a, int b, float v) {
      const double carry = std::min(line[static_cast<std::size_t>(a)], line[static_cast<std::size_t>(b)]);
      if ((a != x && b != x) || a == b || carry <= 0) return;
      node.shares.push_back(v / carry);
      values.push_back(v);
    });
    if (values.empty()) continue;
    node.medianGBps = core::median(values);
    out.push_back(std::move(node));
  }
  return out;
}

std::string lineRateSource(const core::Topology& topology, double declaredGBps, int node) {
  if (declaredGBps > 0) return "declared (--line-rate)";
  const auto ports = std::count_if(topology.inventory.nics.begin(), topology.inventory.nics.end(), [&](const core::NicRecord& n) {
    return n.node == node && n.activeRdma() && n.rateGbps > 0;
  });
  return fmt::format("its {} active RDMA port(s) carry", ports);
}

namespace {

// What rank `r` may move across its node boundary, GB/s: its NIC's active ports shared among the
// node's ranks on that NIC, else the node's line rate shared among its ranks; 0: unknown.
double rankLineRate(const core::Topology& topology, const core::RankRecord& r, double declaredGBps) {
  const auto node = static_cast<std::size_t>(r.node);
  const int ranks = node < topology.nodes.size() ? std::max(topology.nodes[node].ranks, 1) : 1;
  double nicGbps = 0;
  for (const core::NicRecord& n : topology.inventory.nics) {
    if (n.node == r.node && n.device == r.nic && n.activeRdma() && n.rateGbps > 0) nicGbps += n.rateGbps;
  }
  if (declaredGBps > 0 || r.nic.empty() || nicGbps <= 0) {
    return internal::lineRateOf(topology, declaredGBps, r.node) / ranks;
  }
  const auto sharing = std::count_if(topology.ranks.begin(), topology.ranks.end(), [&](const core::RankRecord& o) {
    return o.node == r.node && o.nic == r.nic;
  });
  return nicGbps / 8 / static_cast<double>(std::max<std::ptrdiff_t>(sharing, 1));
}

}  // namespace

std::vector<core::Finding> railLineRateFindings(const std::vector<core::CollectiveRecord>& rows,
                                                const core::Topology& topology, const AnalysisConfig& c) {
  std::vector<core::Finding> out;
  const std::optional<Plateau> plateau = plateauOf(rows, "inter", "all_reduce");
  if (!plateau) return out;
  const double bar = c.lineRateFraction;
  for (const GroupPlateau& g : plateau->groups) {
    const auto ranks = core::parseRanks(g.ranks);
    if (!ranks || ranks->empty()) continue;
    double line = 0;
    int slowest = -1;
    for (const int rank : *ranks) {
      if (rank < 0 || rank >= static_cast<int>(topology.ranks.size())) continue;
      const double mine = rankLineRate(topology, topology.ranks[static_cast<std::size_t>(rank)], c.lineRateGBps);
      if (mine <= 0) {
        line = 0;  // one rank's unknown: the rail's is too
        break;
      }
      if (slowest < 0 || mine < line) std::tie(line, slowest) = std::pair{mine, rank};
    }
    if (line <= 0 || g.busbw >= bar * line) continue;
    core::Finding f;
    f.kind = core::FindingKind::kBelowLineRate;
    f.severity = g.busbw < bar * line / 2 ? core::Severity::kError : core::Severity::kWarning;
    f.subject = fmt::format("rail {} (ranks {})", g.group, g.ranks);
    f.measured = g.busbw;
    f.expected = line;
    f.ratio = g.busbw / line;
    f.unit = "GB/s";
    f.confidence = g.samples >= 3 ? 1.0 : 0.5;
    const core::RankRecord& s = topology.ranks[static_cast<std::size_t>(slowest)];
    f.message = fmt::format(
        "{}: inter all_reduce busbw {:.2f} GB/s at {}-{} is {:.2f}x of the {:.2f} GB/s its NICs carry per rail "
        "(rank {}{}: {}), below {:.2f} - check the rail's NICs, their ranks' NIC binding and the fabric's rate; "
        "confidence {:.2f}",
        f.subject, f.measured, core::formatBytes(plateau->fromBytes), core::formatBytes(plateau->toBytes), f.ratio,
        f.expected, slowest, s.nic.empty() ? "" : " on " + s.nic,
        c.lineRateGBps > 0 || s.nic.empty() ? lineRateSource(topology, c.lineRateGBps, s.node) + ", shared by its node's ranks"
                                            : "its NIC's active ports, shared by the node's ranks on it",
        bar, f.confidence);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace fabricmap::orchestrator
