// The inter-node rules (see rules.h): a node slow both ways, by its egress or its ingress; a link
// between two nodes that are fine with everyone else; a rank slower than its node-mates.
#include <algorithm>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "core/stats.h"
#include "core/units.h"
#include "orchestrator/analysis/rules.h"

namespace fabricmap::orchestrator::internal {
namespace {

// Rank r's inter-node transfers in one direction, judged against the inter-node rank baseline.
Evidence rankEvidence(const InterNode& in, int r, bool outgoing) {
  Evidence e;
  forEachPeer(in.m.rankUnidir, r, [&](int q) {
    if (!in.interNode(r, q)) return;
    const int from = outgoing ? r : q;
    const int to = outgoing ? q : r;
    e.add(in.rankAt(from, to), in.m.rankUnidir.at(from, to));
  });
  return e;
}


// The ranks of node x its slowness in the given directions belongs to: those whose inter-node
// transfers run more than kGap times slower (medians) than the node's best rank. A slow NIC or
// host slows every rank behind it; one rank far slower than its node-mates is its own NIC or
// rail. Empty when the node has one rank, or its ranks do not differ so.
std::vector<std::pair<int, double>> slowRanksOf(const InterNode& in, int x, bool outgoing, bool incoming) {
  const std::vector<int> ranks = ranksOn(in.topo, x);
  if (ranks.size() < 2 || ranks.back() >= in.m.rankUnidir.n || in.m.rankLinkClass.n != in.m.rankUnidir.n) return {};
  std::vector<double> medians;
  for (int r : ranks) {
    Evidence e;
    if (outgoing) e.merge(rankEvidence(in, r, true));
    if (incoming) e.merge(rankEvidence(in, r, false));
    if (e.judged < 2) return {};
    medians.push_back(core::median(e.values));
  }
  const double best = *std::max_element(medians.begin(), medians.end());
  std::vector<std::pair<int, double>> slow;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (medians[i] * kGap < best) slow.emplace_back(ranks[i], medians[i] / best);
  }
  return slow;
}

// A node named whole, by its egress or by its ingress, and the evidence of each direction.
struct NodeCulprit {
  int node = -1;
  bool outgoing = false;
  bool incoming = false;
  Evidence out;
  Evidence in;
};

// Node x is a culprit when most of its pairs in some directions are slow and (for one direction)
// most of the other direction is fine, unless the slowness is some of its ranks' (the rank rule
// names those; their pairs are explained here).
std::optional<NodeCulprit> nodeCulprit(InterNode& in, int x) {
  NodeCulprit n{x, false, false, directionOf(in.view, x, true), directionOf(in.view, x, false)};
  if (n.out.judged < 2 || n.in.judged < 2) return std::nullopt;
  const double share = in.c.attributeShare;
  n.outgoing = n.out.share() >= share;
  n.incoming = n.in.share() >= share;
  const bool both = n.outgoing && n.incoming;
  if (!both && !(n.outgoing && n.in.share() <= 1.0 - share) && !(n.incoming && n.out.share() <= 1.0 - share)) {
    return std::nullopt;
  }
  in.explain(x, n.outgoing, n.incoming);
  if (const auto ranks = slowRanksOf(in, x, n.outgoing, n.incoming); !ranks.empty()) {
    Evidence e;
    if (n.outgoing) e.merge(n.out);
    if (n.incoming) e.merge(n.in);
    for (const auto& [rank, ratio] : ranks) in.slowRanks.push_back({rank, n.outgoing, n.incoming, e, ratio});
    return std::nullopt;
  }
  in.named[static_cast<std::size_t>(x)] = 1;
  return n;
}

// How clean the fabric is apart from the named nodes: the fine share of the pairs that touch none
// of them (1 when there are none), the first part of a node finding's margin.
double restIsClean(const InterNode& in) {
  int judged = 0;
  int slow = 0;
  in.view.values.forEachCell([&](int x, int y, float) {
    if (x == y || in.named[static_cast<std::size_t>(x)] || in.named[static_cast<std::size_t>(y)]) return;
    const Judged j = in.view.at(x, y);
    ++judged;
    slow += j.verdict == Verdict::kSlow;
  });
  return judged > 0 ? 1.0 - static_cast<double>(slow) / judged : 1.0;
}

Finding nodeFinding(const InterNode& in, const NodeCulprit& n, double rest) {
  Evidence e;
  if (n.outgoing) e.merge(n.out);
  if (n.incoming) e.merge(n.in);
  Finding f;
  f.nodeA = n.node;
  f.subject = nodeName(in.topo, n.node);
  f.expected = in.base.bandwidth;
  f.unit = "GB/s";
  f.measured = core::median(e.values);
  f.ratio = f.measured / f.expected;
  const std::string rate = core::formatRate(f.measured);
  const std::string base = core::formatRate(f.expected);
  double margin = rest;
  if (n.outgoing && n.incoming) {
    f.kind = core::FindingKind::kNode;
    f.message = fmt::format("{}: {} of {} peers see it slow both ways, {} vs {} baseline ({:.2f}x) - check its NIC, "
                            "cable or host",
                            f.subject, std::max(n.out.slow, n.in.slow), n.out.judged, rate, base, f.ratio);
  } else if (n.outgoing) {
    f.kind = core::FindingKind::kNodeEgress;
    margin *= 1.0 - n.in.share();
    f.message = fmt::format("{} egress: sending to {} of {} peers at {} vs {} baseline ({:.2f}x) while receiving "
                            "normally - check its transmit path (NIC port, cable, egress shaping)",
                            f.subject, n.out.slow, n.out.judged, rate, base, f.ratio);
  } else {
    f.kind = core::FindingKind::kNodeIngress;
    margin *= 1.0 - n.out.share();
    f.message = fmt::format("{} ingress: receiving from {} of {} peers at {} vs {} baseline ({:.2f}x) while sending "
                            "normally - check its receive path (NIC port, cable, switch port towards it)",
                            f.subject, n.in.slow, n.in.judged, rate, base, f.ratio);
  }
  f.severity = severityFor(f.ratio);
  setConfidence(f, e, margin, true);
  return f;
}

// How fine both ends of the link x - y are with everyone else: 1 - the slow share of their other
// pairs that no finding explains (1 when there are none: the subject names both ends).
double endsAreFine(const InterNode& in, int x, int y) {
  int judged = 0;
  int slow = 0;
  for (int end : {x, y}) {
    forEachPeer(in.view.values, end, [&](int z) {
      if (z == x || z == y) return;
      for (const auto& [a, b] : {std::pair{end, z}, std::pair{z, end}}) {
        const Judged j = in.view.at(a, b);
        if (j.verdict == Verdict::kUnmeasured || in.isExplained(a, b)) continue;
        ++judged;
        slow += j.verdict == Verdict::kSlow;
      }
    });
  }
  return judged > 0 ? 1.0 - static_cast<double>(slow) / judged : 1.0;
}

// Slow node pairs nothing above explains: links (both directions in one finding).
void linkFindings(InterNode& in, std::vector<Finding>& findings) {
  const core::Matrix& bw = in.m.nodeBw;
  const auto unexplained = [&](int a, int b) { return !in.isExplained(a, b); };
  for (const auto& [x, y] : slowPairs(in.view, unexplained)) {
    const bool xy = in.view.isSlow(x, y) && !in.isExplained(x, y);
    const bool yx = in.view.isSlow(y, x) && !in.isExplained(y, x);
    Evidence e;
    if (xy) e.add(in.view.at(x, y), bw.at(x, y));
    if (yx) e.add(in.view.at(y, x), bw.at(y, x));
    Finding f;
    f.kind = core::FindingKind::kLink;
    f.nodeA = xy ? x : y;
    f.nodeB = xy ? y : x;
    f.expected = in.base.bandwidth;
    f.unit = "GB/s";
    if (xy && yx) {
      f.subject = nodeName(in.topo, x) + " <-> " + nodeName(in.topo, y);
      f.measured = std::min(bw.at(x, y), bw.at(y, x));
    } else {
      f.subject = nodeName(in.topo, f.nodeA) + " -> " + nodeName(in.topo, f.nodeB);
      f.measured = bw.at(f.nodeA, f.nodeB);
    }
    f.ratio = f.measured / f.expected;
    f.severity = severityFor(f.ratio);
    f.message = fmt::format(
        "{}: {} vs {} baseline ({:.2f}x){} - check the route between them (switch ports, cabling, routing)",
        f.subject, core::formatRate(f.measured), core::formatRate(in.base.bandwidth), f.ratio,
        in.view.n() >= 3 ? " while both nodes are fine with their other peers" : "");
    setConfidence(f, e, endsAreFine(in, x, y), false);
    findings.push_back(std::move(f));
  }
}

// The ranks worth a closer look: one pass over the rank matrix counts each rank's slow inter-node
// transfers per direction; a rank with most of one direction slow is a candidate.
std::vector<int> rankCandidates(const InterNode& in) {
  const core::Matrix& bw = in.m.rankUnidir;
  const auto ranks = static_cast<std::size_t>(bw.n);
  std::vector<int> outJudged(ranks), outSlow(ranks), inJudged(ranks), inSlow(ranks);
  const std::vector<int>& nodeOf = in.m.rankLinkClass.rankNode;
  const bool compact = in.m.rankLinkClass.table.empty();
  // a cell at or above the bar is not slow: only the cells below it need the whole judgement
  const core::Expected& fixed = in.rankJudge.fixed;
  const double bar = std::isfinite(fixed.bandwidth)
                         ? std::max(bwBar(fixed, in.c), bwBar(in.rankJudge.retested, in.c)) * fixed.bandwidth
                         : -1.0;
  const auto count = [&](int a, int b, float v) {
    const bool slow = v < bar && in.rankAt(a, b).verdict == Verdict::kSlow;
    ++outJudged[static_cast<std::size_t>(a)];
    ++inJudged[static_cast<std::size_t>(b)];
    outSlow[static_cast<std::size_t>(a)] += slow;
    inSlow[static_cast<std::size_t>(b)] += slow;
  };
  if (compact && !bw.sparse) {  // the n x n pass of full mode, kept tight
    for (int a = 0; a < bw.n; ++a) {
      const float* row = bw.values.data() + bw.index(a, 0);
      const int node = nodeOf[static_cast<std::size_t>(a)];
      for (int b = 0; b < bw.n; ++b) {
        if (std::isfinite(row[b]) && nodeOf[static_cast<std::size_t>(b)] != node) count(a, b, row[b]);
      }
    }
  } else {
    bw.forEachCell([&](int a, int b, float v) {
      const bool inter = compact ? nodeOf[static_cast<std::size_t>(a)] != nodeOf[static_cast<std::size_t>(b)]
                                 : in.interNode(a, b);
      if (inter) count(a, b, v);
    });
  }
  std::vector<int> out;
  for (std::size_t r = 0; r < ranks; ++r) {
    const bool o = outJudged[r] > 0 && outSlow[r] >= in.c.attributeShare * outJudged[r];
    const bool i = inJudged[r] > 0 && inSlow[r] >= in.c.attributeShare * inJudged[r];
    if (o || i) out.push_back(static_cast<int>(r));
  }
  return out;
}

// A rank of a node not named whole whose inter-node transfers are mostly slow in one direction
// or both (its NIC or rail), while the node's other ranks are fine.
void rankFindings(InterNode& in, std::vector<Finding>& findings) {
  if (in.m.rankLinkClass.n != in.m.rankUnidir.n) return;
  for (int r : rankCandidates(in)) {
    const auto& rec = in.topo.ranks[static_cast<std::size_t>(r)];
    if (std::any_of(in.slowRanks.begin(), in.slowRanks.end(), [&](const auto& s) { return s.rank == r; })) {
      continue;  // named on its node's evidence
    }
    if (in.named[static_cast<std::size_t>(rec.node)] || in.topo.nodes[static_cast<std::size_t>(rec.node)].ranks < 2) {
      continue;  // the node finding covers it, or the rank is the node
    }
    const Evidence out = rankEvidence(in, r, true);
    const Evidence inc = rankEvidence(in, r, false);
    if (out.judged + inc.judged < 4) continue;
    const bool o = out.judged >= 2 && out.share() >= in.c.attributeShare;
    const bool i = inc.judged >= 2 && inc.share() >= in.c.attributeShare;
    if (!o && !i) continue;
    Evidence e;
    if (o) e.merge(out);
    if (i) e.merge(inc);
    // the margin: how fine the node's other ranks are in the same directions
    Evidence others;
    for (int q : ranksOn(in.topo, rec.node)) {
      if (q == r) continue;
      if (o) others.merge(rankEvidence(in, q, true));
      if (i) others.merge(rankEvidence(in, q, false));
    }
    Finding f;
    f.kind = core::FindingKind::kRank;
    f.rank = r;
    f.nodeA = rec.node;
    f.subject = fmt::format("rank {} on {}", r, nodeName(in.topo, rec.node));
    f.measured = core::median(e.values);
    f.expected = in.rankJudge.fixed.bandwidth;
    f.ratio = f.measured / f.expected;
    f.unit = "GB/s";
    f.severity = severityFor(f.ratio);
    f.message = fmt::format(
        "{}: {} of {} inter-node transfers {} at {} vs {} baseline ({:.2f}x) while the node's other ranks are fine - "
        "check that rank's NIC/rail and its GPU-NIC affinity",
        f.subject, e.slow, e.judged, o && i ? "both ways" : o ? "sending" : "receiving", core::formatRate(f.measured),
        core::formatRate(f.expected), f.ratio);
    setConfidence(f, e, 1.0 - others.share(), true);
    findings.push_back(std::move(f));
  }
}

// The ranks a slow node's pairs come from (InterNode::slowRanks): named on the node's evidence,
// the margin how much slower the rank runs than its node's best (at half its speed 0, at a fifth
// or less 1).
void slowRankFindings(const InterNode& in, std::vector<Finding>& findings) {
  for (const InterNode::SlowRank& s : in.slowRanks) {
    const auto& rec = in.topo.ranks[static_cast<std::size_t>(s.rank)];
    Evidence own;
    if (s.outgoing) own.merge(rankEvidence(in, s.rank, true));
    if (s.incoming) own.merge(rankEvidence(in, s.rank, false));
    Finding f;
    f.kind = core::FindingKind::kRank;
    f.rank = s.rank;
    f.nodeA = rec.node;
    f.subject = fmt::format("rank {} on {}", s.rank, nodeName(in.topo, rec.node));
    f.measured = core::median(own.values);
    f.expected = in.rankJudge.fixed.bandwidth;
    f.ratio = f.measured / f.expected;
    f.unit = "GB/s";
    f.severity = severityFor(std::min(f.ratio, s.ratio));
    f.message = fmt::format(
        "{}: its node's pairs are slow {} ({} of {}), and its inter-node transfers run at {:.2f}x of its node's best "
        "rank ({} vs {} baseline) - check that rank's NIC/rail and its GPU-NIC affinity",
        f.subject, s.outgoing && s.incoming ? "both ways" : s.outgoing ? "sending" : "receiving", s.node.slow,
        s.node.judged, s.ratio, core::formatRate(f.measured), core::formatRate(f.expected));
    setConfidence(f, s.node, std::clamp((1.0 / kGap - s.ratio) / 0.3, 0.0, 1.0), true);
    findings.push_back(std::move(f));
  }
}

}  // namespace

// Node x is named when most of its pairs in some directions are slow (see nodeCulprit).
void nodeRule(RuleContext& ctx, std::vector<Finding>& findings) {
  InterNode& in = ctx.inter;
  std::vector<NodeCulprit> culprits;
  for (int x = 0; x < in.view.n(); ++x) {
    if (auto n = nodeCulprit(in, x)) culprits.push_back(std::move(*n));
  }
  const double rest = restIsClean(in);
  for (const NodeCulprit& n : culprits) findings.push_back(nodeFinding(in, n, rest));
}

void linkRule(RuleContext& ctx, std::vector<Finding>& findings) { linkFindings(ctx.inter, findings); }
void rankRule(RuleContext& ctx, std::vector<Finding>& findings) { rankFindings(ctx.inter, findings); }
void slowRankRule(RuleContext& ctx, std::vector<Finding>& findings) { slowRankFindings(ctx.inter, findings); }

}  // namespace fabricmap::orchestrator::internal
