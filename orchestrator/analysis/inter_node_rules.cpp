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

int nodeOf(const InterNode& in, int rank) { return in.topo.ranks[static_cast<std::size_t>(rank)].node; }

// Rank r's inter-node transfers in one direction, judged against the inter-node rank baseline;
// those between node pairs a switch or uplink finding explains are not its evidence.
Evidence rankEvidence(const InterNode& in, int r, bool outgoing) {
  Evidence e;
  forEachPeer(in.m.rankUnidir, r, [&](int q) {
    if (!in.interNode(r, q)) return;
    const int from = outgoing ? r : q;
    const int to = outgoing ? q : r;
    if (!in.explainedAbove.empty() && in.isExplainedAbove(nodeOf(in, from), nodeOf(in, to))) return;
    e.add(in.rankAt(from, to), in.m.rankUnidir.at(from, to));
  });
  return e;
}


// The ranks of node x its slowness in the given directions belongs to: those whose inter-node
// transfers run more than kGap times slower (medians) than the node's best rank. A slow NIC or
// host slows every rank behind it; one rank far slower than its node-mates is its own NIC or
// rail. Empty when the node has one rank, or its ranks do not differ so.
std::vector<std::pair<int, double>> slowRanksOf(const InterNode& in, int x, bool outgoing, bool incoming) {
  const std::vector<int>& ranks = in.ranksOf[static_cast<std::size_t>(x)];
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

// The ranks worth a closer look: one pass over the rank matrix counts each rank's slow inter-node
// transfers per direction; a rank with most of one direction slow is a candidate.
std::vector<int> findRankCandidates(const InterNode& in) {
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

const std::vector<int>& rankCandidates(InterNode& in) {
  if (!in.rankCandidates) in.rankCandidates = findRankCandidates(in);
  return *in.rankCandidates;
}

// A node named whole, by its egress or by its ingress, and the evidence of each direction.
// `expected`: the baseline it was judged against; `alone`: that of the pairs without it.
struct NodeCulprit {
  int node = -1;
  bool outgoing = false;
  bool incoming = false;
  Evidence out;
  Evidence in;
  double expected = 0;
  bool alone = false;
  bool byRanks = false;  // out/in hold its ranks' inter-node transfers, not node pairs
  // Named one way although the other is slow too, as that way's collateral: how much deeper the
  // named way lies (its median over the other's, below 1 / kCollateral); 0 otherwise.
  double deeper = 0;
};

// A NIC or cable slow one way slows the other way's transfers a little too (their handshakes and
// acknowledgements travel the slow way): both ways slow, one over kCollateral times deeper than
// the other, is that way's fault. A host slow as a whole is about as slow both ways.
constexpr double kCollateral = 4.0;

// Which directions of n make it a culprit: most of its pairs in some directions slow and (for one
// direction) most of the other direction fine, or far less slow (kCollateral), however many of
// its pairs that is (a tight bar puts a share of the collateral way's pairs below it, not
// most). False when none do.
bool slowDirections(NodeCulprit& n, double share) {
  if (n.out.judged < 2 || n.in.judged < 2) return false;
  n.outgoing = n.out.share() >= share;
  n.incoming = n.in.share() >= share;
  if (!n.outgoing && !n.incoming) return false;
  const double out = core::median(n.out.values);
  const double in = core::median(n.in.values);
  if (n.outgoing && n.incoming) {
    if (out > kCollateral * in) n.outgoing = false;
    if (in > kCollateral * out) n.incoming = false;
    if (!(n.outgoing && n.incoming)) n.deeper = n.outgoing ? out / in : in / out;
    return true;
  }
  const Evidence& other = n.outgoing ? n.in : n.out;
  if (other.share() <= 1.0 - share) return true;
  const double deeper = n.outgoing ? out / in : in / out;
  if (!(deeper * kCollateral < 1.0)) return false;
  n.deeper = deeper;
  return true;
}

// Names n's node, unless the slowness is some of its ranks' (the rank rule names those); either
// way its pairs in the slow directions are explained (the collateral way's too).
std::optional<NodeCulprit> nameNode(InterNode& in, NodeCulprit n) {
  const int x = n.node;
  in.explain(x, n.outgoing || n.deeper > 0, n.incoming || n.deeper > 0);
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

// Node x is a culprit when its pairs are slow as slowDirections says, against the fabric's baseline.
// Node x's pairs in one direction that no finding before explains (a switch or uplink the switch
// rule named slows the pairs through it, whichever node they touch).
Evidence unexplainedDirection(const InterNode& in, int x, bool outgoing) {
  Evidence e;
  forEachPeer(in.view.values, x, [&](int y) {
    const int from = outgoing ? x : y;
    const int to = outgoing ? y : x;
    if (!in.isExplained(from, to)) e.add(in.view.at(from, to), in.view.values.at(from, to));
  });
  return e;
}

std::optional<NodeCulprit> nodeCulprit(InterNode& in, int x) {
  NodeCulprit n{x, false, false, unexplainedDirection(in, x, true), unexplainedDirection(in, x, false),
                in.base.bandwidth};
  if (!slowDirections(n, in.c.attributeShare)) return std::nullopt;
  return nameNode(in, std::move(n));
}

// A node slower than the rest, but not by enough to stand out of a spread its own pairs widen: on a
// 4-node fabric a node's pairs are half the node pairs, and a node at 0.8x of the others made the
// fabric look +-11% noisy, which lowered the bar to 0.66x (issue 14's scenario 33). Such a node is
// judged again against the pairs without it and without the nodes already named: their median,
// spread and gap, when at least kAloneCells of them are measured. Only nodes most of whose pairs in
// a direction are below the plain threshold of the fabric's baseline (or of the final figures'
// median, when higher) are candidates, at most
// kAloneCandidates and a quarter of the nodes (the premise is one node apart from a quiet rest),
// and only a node slow both ways is named so (see nodeCulpritAlone).
constexpr int kAloneCandidates = 8;

bool mostlyBelow(const InterNode& in, int x, bool outgoing, double bar) {
  int judged = 0;
  int below = 0;
  forEachPeer(in.m.nodeBw, x, [&](int y) {
    if (in.named[static_cast<std::size_t>(y)] || in.isExplained(outgoing ? x : y, outgoing ? y : x)) return;
    const float v = outgoing ? in.m.nodeBw.at(x, y) : in.m.nodeBw.at(y, x);
    if (!std::isfinite(v)) return;
    ++judged;
    below += v < bar;
  });
  return judged >= 2 && below >= in.c.attributeShare * judged;
}

std::vector<int> aloneCandidates(const InterNode& in, const std::vector<char>& handled) {
  // the fabric's baseline, or the final figures' median where the first round, which fixed the
  // baseline, ran below them (a depressed first round less than kDepressedRound below)
  std::vector<float> cells;
  sampleOf(in.m.nodeBw, [&](int x, int y, float v) {
    if (x != y) cells.push_back(v);
  });
  const double reference = std::max(in.base.bandwidth, robustStats(std::move(cells), true).median);
  const double bar = in.c.slowThreshold * reference;
  std::vector<int> out;
  if (!(bar > 0)) return out;
  for (int x = 0; x < in.view.n(); ++x) {
    if (!handled[static_cast<std::size_t>(x)] && (mostlyBelow(in, x, true, bar) || mostlyBelow(in, x, false, bar))) {
      out.push_back(x);
    }
  }
  const auto most = std::min<std::size_t>(kAloneCandidates, static_cast<std::size_t>(in.view.n() / 4));
  if (out.size() > most) out.clear();
  return out;
}

// The evidence of node x's pairs with unnamed peers in one direction, judged by `alone`.
Evidence aloneDirection(const InterNode& in, const JudgedMatrix& alone, int x, bool outgoing) {
  Evidence e;
  forEachPeer(in.m.nodeBw, x, [&](int y) {
    if (in.named[static_cast<std::size_t>(y)]) return;
    const int from = outgoing ? x : y;
    const int to = outgoing ? y : x;
    e.add(alone.at(from, to), in.m.nodeBw.at(from, to));
  });
  return e;
}

// Like is compared with like: a cell's figure is its best sample, so when some of x's pairs were
// measured once, the rest counts only its pairs measured once too (a best of three would stand
// higher than one sample without any fault).
std::optional<NodeCulprit> nodeCulpritAlone(InterNode& in, int x) {
  bool xRetested = true;
  forEachPeer(in.m.nodeBw, x, [&](int y) {
    xRetested = xRetested && core::cellOr(in.m.nodeCv, x, y) == 0.0f && core::cellOr(in.m.nodeCv, y, x) == 0.0f;
  });
  std::vector<float> rest;
  in.m.nodeBw.forEachCell([&](int a, int b, float v) {
    const bool named = in.named[static_cast<std::size_t>(a)] || in.named[static_cast<std::size_t>(b)];
    if (a != b && a != x && b != x && !named && (xRetested || core::cellOr(in.m.nodeCv, a, b) != 0.0f)) {
      rest.push_back(v);
    }
  });
  if (static_cast<int>(rest.size()) < kAloneCells) return std::nullopt;
  // the lowest healthy pair without x: a gap sets another fault's pairs aside (a throttled link
  // beside the node), as it does for the baselines
  const Groups restGroups = healthyGroup(rest, true);
  const float lowest = *std::min_element(restGroups.healthy.begin(), restGroups.healthy.end());
  const Robust r = robustStats(std::move(rest), true);
  core::Expected e = in.base;
  e.bandwidth = r.median;
  e.bandwidthSpread = r.spread;
  e.bandwidthGapBar = r.gapBar;
  // only a stricter bar than the fabric's can name what the fabric's bar did not
  if (!(bwBar(e, in.c) * e.bandwidth > bwBar(in.base, in.c) * in.base.bandwidth)) return std::nullopt;
  const JudgedMatrix alone{in.m.nodeBw, in.m.nodeBwWorst, in.m.nodeCv, &judgeBw, Baseline{e, e}, in.c};
  NodeCulprit n{x, false, false, aloneDirection(in, alone, x, true), aloneDirection(in, alone, x, false),
                e.bandwidth, true};
  // A bar set by few pairs can be tight by chance, so the evidence must be whole: every pair of x
  // slow both ways, and each of them below every healthy pair without it. An egress or an ingress alone
  // is not judged so: on a 6-node emulation one direction of an innocent node beside a slow link
  // fell below such a bar in 3 of 4 pairs.
  const bool whole = n.out.judged >= 2 && n.in.judged >= 2 && n.out.slow == n.out.judged && n.in.slow == n.in.judged;
  if (!whole || !(std::max(*std::max_element(n.out.values.begin(), n.out.values.end()),
                           *std::max_element(n.in.values.begin(), n.in.values.end())) < lowest)) {
    return std::nullopt;
  }
  n.outgoing = n.incoming = true;
  return nameNode(in, std::move(n));
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

// How sure a one-way finding is that the other way is not the node's too: that way fine, or (its
// collateral) far less slow.
double otherWayMargin(const NodeCulprit& n, const Evidence& other) {
  return n.deeper > 0 ? std::clamp(1.0 - kCollateral * n.deeper, 0.0, 1.0) : 1.0 - other.share();
}

std::string otherWay(const NodeCulprit& n, const Evidence& other) {
  if (n.deeper == 0) return "normally";
  return fmt::format("at {} ({:.0f}x faster: what the slow way costs its acknowledgements)",
                     core::formatRate(core::median(other.values)), 1.0 / n.deeper);
}

Finding nodeFinding(const InterNode& in, const NodeCulprit& n, double rest) {
  Evidence e;
  if (n.outgoing) e.merge(n.out);
  if (n.incoming) e.merge(n.in);
  Finding f;
  f.nodeA = n.node;
  f.subject = nodeName(in.topo, n.node);
  f.expected = n.expected;
  f.unit = "GB/s";
  f.measured = core::median(e.values);
  f.ratio = f.measured / f.expected;
  const std::string rate = core::formatRate(f.measured);
  const std::string base =
      core::formatRate(f.expected) + (n.alone ? " (the pairs without it)" : n.byRanks ? " (rank pairs)" : "");
  const char* peers = n.byRanks ? "peer ranks" : "peers";
  double margin = rest;
  if (n.outgoing && n.incoming) {
    f.kind = core::FindingKind::kNode;
    f.message = fmt::format("{}: {} of {} {} see it slow both ways, {} vs {} baseline ({:.2f}x) - check its NIC, "
                            "cable or host",
                            f.subject, std::max(n.out.slow, n.in.slow), n.out.judged, peers, rate, base, f.ratio);
  } else if (n.outgoing) {
    f.kind = core::FindingKind::kNodeEgress;
    margin *= otherWayMargin(n, n.in);
    f.message = fmt::format("{} egress: sending to {} of {} {} at {} vs {} baseline ({:.2f}x) while receiving "
                            "{} - check its transmit path (NIC port, cable, egress shaping)",
                            f.subject, n.out.slow, n.out.judged, peers, rate, base, f.ratio, otherWay(n, n.in));
  } else {
    f.kind = core::FindingKind::kNodeIngress;
    margin *= otherWayMargin(n, n.out);
    f.message = fmt::format("{} ingress: receiving from {} of {} {} at {} vs {} baseline ({:.2f}x) while sending "
                            "{} - check its receive path (NIC port, cable, switch port towards it)",
                            f.subject, n.in.slow, n.in.judged, peers, rate, base, f.ratio, otherWay(n, n.out));
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
    for (int q : in.ranksOf[static_cast<std::size_t>(rec.node)]) {
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

// A node every rank of which is a rank candidate, in the same directions, that the node matrix
// did not name: node pairs, measured with all of a node's ranks streaming at once, vary more on a
// shared host than single rank pairs (issue 14's shaped scenario 23: node pairs +-50%, both ranks
// of the throttled node 12 of 12 transfers at 0.20x). Judged on its ranks' transfers, merged.
std::optional<NodeCulprit> nodeCulpritByRanks(InterNode& in, int x) {
  const std::vector<int>& ranks = in.ranksOf[static_cast<std::size_t>(x)];
  if (ranks.size() < 2 || in.m.rankLinkClass.n != in.m.rankUnidir.n || ranks.back() >= in.m.rankUnidir.n) {
    return std::nullopt;
  }
  // as for node pairs, two peer nodes at least that no switch or uplink explains: with one, a node
  // and the link to it look alike
  int peerNodes = 0;
  forEachPeer(in.m.nodeBw, x, [&](int y) {
    peerNodes += std::isfinite(in.m.nodeBw.at(x, y)) && !(in.isExplainedAbove(x, y) && in.isExplainedAbove(y, x)) ? 1 : 0;
  });
  if (peerNodes < 2) return std::nullopt;
  const std::vector<int>& candidates = rankCandidates(in);
  for (int r : ranks) {
    if (!std::binary_search(candidates.begin(), candidates.end(), r)) return std::nullopt;
  }
  NodeCulprit n{x, false, false, {}, {}, in.rankJudge.fixed.bandwidth};
  n.byRanks = true;
  for (int r : ranks) {
    n.out.merge(rankEvidence(in, r, true));
    n.in.merge(rankEvidence(in, r, false));
  }
  if (!slowDirections(n, in.c.attributeShare)) return std::nullopt;
  return nameNode(in, std::move(n));
}

// Node x is named when most of its pairs in some directions are slow (see nodeCulprit), judged
// against the fabric, then against the pairs without it, then on its ranks' transfers.
void nodeRule(RuleContext& ctx, std::vector<Finding>& findings) {
  InterNode& in = ctx.inter;
  std::vector<NodeCulprit> culprits;
  std::vector<char> handled(static_cast<std::size_t>(in.view.n()), 0);  // named, or its slow ranks
  for (int x = 0; x < in.view.n(); ++x) {
    const std::size_t ranksBefore = in.slowRanks.size();
    if (auto n = nodeCulprit(in, x)) culprits.push_back(std::move(*n));
    handled[static_cast<std::size_t>(x)] = in.named[static_cast<std::size_t>(x)] || in.slowRanks.size() > ranksBefore;
  }
  for (int x : aloneCandidates(in, handled)) {
    const std::size_t ranksBefore = in.slowRanks.size();
    if (auto n = nodeCulpritAlone(in, x)) culprits.push_back(std::move(*n));
    handled[static_cast<std::size_t>(x)] = in.named[static_cast<std::size_t>(x)] || in.slowRanks.size() > ranksBefore;
  }
  for (int x = 0; x < in.view.n(); ++x) {
    if (handled[static_cast<std::size_t>(x)]) continue;
    if (auto n = nodeCulpritByRanks(in, x)) culprits.push_back(std::move(*n));
  }
  const double rest = restIsClean(in);
  for (const NodeCulprit& n : culprits) findings.push_back(nodeFinding(in, n, rest));
}

void linkRule(RuleContext& ctx, std::vector<Finding>& findings) { linkFindings(ctx.inter, findings); }
void rankRule(RuleContext& ctx, std::vector<Finding>& findings) { rankFindings(ctx.inter, findings); }
void slowRankRule(RuleContext& ctx, std::vector<Finding>& findings) { slowRankFindings(ctx.inter, findings); }

}  // namespace fabricmap::orchestrator::internal
