// The cable rule (see rules.h): with the fabric's topology, one slow cable among a leaf's uplinks.
//
// A subnet whose switches forward by destination (InfiniBand's linear forwarding tables, whatever
// the routing engine: ftree, updn, minhop) sends all of a leaf's traffic for one destination up
// one of its cables, and all traffic into one of its nodes down one. So one slow cable of several
// slows, going up, the pairs from every node under the leaf to the destinations routed over it
// and none of their other pairs; coming down, the pairs into the nodes under the leaf routed over
// it from every node outside the leaf, while their leafmates reach them at full rate. Which cable
// carries which destination is the subnet manager's choice, not in the fabric file, so the switch
// rule sees only the leaf's uplinks as a group, mostly fine; the node rule would name each such
// destination's ingress and the link rule the rest, every one of them innocent.
//
// Per leaf with two uplinks or more, this rule looks for those two shapes among the pairs no
// finding before explains:
//   out of it: destinations d outside the leaf that at least --attribute-share of the nodes under
//              it reach slowly (2 at least), while at least that share of the other nodes outside
//              the leaf reach d well (d itself is fine), fewer than all the destinations (else the
//              whole group is slow: the switch rule's); two such destinations, or one that 3 of
//              the leaf's nodes reach slowly;
//   into it:   nodes x under the leaf reached slowly from at least that share of the nodes outside
//              it (from two leaves, where two measured x), and well from at least that share of
//              their leafmates (x itself is fine), as
//              fast as the leaf's other pairs among themselves (a pair inside a leaf crosses
//              fewer cables and runs faster: a host's own slow cable can leave it above the
//              fabric's bar while it is below its leafmates' own rate);
// slow at one level (kOneCauseSpread). Either names the leaf's uplinks, one finding per leaf,
// the destinations in its message, the pairs explained, and with them the slow pairs the other
// way: their acknowledgements (a transport's, a rendezvous protocol's) travel back over the cable;
// and the slow pairs across the uplinks too few measured pairs left out of a shape (quick mode),
// at the finding's level, neither of whose ends is slow otherwise. Before the leaves one by one,
// every leaf's inward shape at once is one spine (spineRule).
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "core/stats.h"
#include "core/units.h"
#include "orchestrator/analysis/fabric_paths.h"
#include "orchestrator/analysis/rules.h"

namespace fabricmap::orchestrator::internal {
namespace {

// One cause slows the pairs through it alike (as in the switch rule): the slow pairs of a shape
// lie within this factor of their median.
constexpr double kOneCauseSpread = 4.0;

// Peers a node must have measured for its sending to be judged slow as a whole (slowSendersOf).
constexpr int kSlowSenderPeers = 4;

// Nodes under a leaf that reach one destination slowly, while the rest reach it well, for that
// one destination to be an outward shape.
constexpr int kOneDestination = 3;

// Slow and fine counts of a set of pairs no finding before explains.
struct Count {
  int judged = 0;
  int slow = 0;
  int fine = 0;
  void add(Verdict v) {
    if (v != Verdict::kSlow && v != Verdict::kFine && v != Verdict::kNoisy) return;
    ++judged;
    slow += v == Verdict::kSlow;
    fine += v == Verdict::kFine;
  }
  bool mostlySlow(double share) const { return judged >= 2 && slow >= share * judged; }
  // A noisy pair (samples on both sides of the bar) says neither way: at least `share` of the fine
  // and slow ones fine, and half of all.
  bool mostlyFine(double share) const { return fine >= 1 && fine >= share * (fine + slow) && 2 * fine >= judged; }
};

struct Leaf {
  int uplinks = -1;          // its kUplinks suspect
  std::vector<int> under;    // run nodes under it
  std::vector<int> outside;  // placed run nodes not under it
  std::vector<int> leafOf;   // per outside node, the switch right above it (a device)
  bool shared = false;       // another switch with uplinks is above exactly these nodes
};

// Per node: whether it sends slowly to most of its measured peers (its own egress, or all of it):
// its pairs say nothing of where they go, so they neither clear nor blame a destination.
std::vector<char> slowSendersOf(const InterNode& in, double share) {
  std::vector<char> out(static_cast<std::size_t>(in.view.n()), 0);
  for (int x = 0; x < in.view.n(); ++x) {
    Count c;
    forEachPeer(in.view.values, x, [&](int y) {
      if (!in.isExplained(x, y)) c.add(in.view.at(x, y).verdict);
    });
    out[static_cast<std::size_t>(x)] = c.judged >= kSlowSenderPeers && c.mostlySlow(share) ? 1 : 0;
  }
  return out;
}

class Shapes {
 public:
  Shapes(const InterNode& in, const Leaf& leaf, const AnalysisConfig& c, const std::vector<char>& slowSenders)
      : in_(in), leaf_(leaf), share_(c.attributeShare), threshold_(c.slowThreshold), slowSenders_(slowSenders),
        where_(static_cast<std::size_t>(std::max(in.view.n(), 0)), kNowhere) {
    for (int x : leaf_.under) {
      if (x < in.view.n()) where_[static_cast<std::size_t>(x)] = kUnder;
    }
    for (std::size_t i = 0; i < leaf_.outside.size(); ++i) {
      if (leaf_.outside[i] < in.view.n()) where_[static_cast<std::size_t>(leaf_.outside[i])] = static_cast<int>(i);
    }
  }

  // Destinations outside the leaf its nodes reach slowly while the rest of the fabric reaches them
  // well: two at least, fewer than all (else the whole group is slow: the switch rule's), or one
  // that kOneDestination of its nodes reach slowly (the leaf's cable towards it is all those
  // pairs share that the others' do not). Each node's measured peers only: a quick run measures a
  // few per node, and a lookup per pair of nodes is quadratic.
  std::vector<int> outward() const {
    std::map<int, Count> from;  // per destination outside, ascending
    for (int s : leaf_.under) {
      forEachPeer(in_.view.values, s, [&](int d) {
        if (outside(d)) from[d].add(at(s, d));
      });
    }
    std::vector<int> out;
    int most = 0;
    for (const auto& entry : from) {
      const int d = entry.first;  // a plain copy: clang 14 lambdas cannot capture structured bindings
      const Count& count = entry.second;
      if (!count.mostlySlow(share_)) continue;  // before the rest of the fabric: most d are not
      Count others;
      forEachPeer(in_.view.values, d, [&](int x) {
        if (outside(x) && !slowSender(x)) others.add(at(x, d));
      });
      if (others.mostlyFine(share_)) {
        out.push_back(d);
        most = std::max(most, count.slow);
      }
    }
    if (out.size() == leaf_.outside.size() || (out.size() == 1 && most < kOneDestination)) out.clear();
    return out;
  }

  // Nodes under the leaf reached slowly from outside it, from two leaves at least where two
  // measured them (a cable down to the leaf slows every other leaf's pairs; a cable up from one
  // leaf, those of that leaf only), and well from their leafmates.
  std::vector<int> inward() const {
    std::vector<int> in;
    for (int x : leaf_.under) {
      Count outsiders;
      Count mates;
      std::set<int> measuredFrom;
      std::set<int> slowFrom;
      forEachPeer(in_.view.values, x, [&](int y) {
        const Verdict v = at(y, x);
        if (!outside(y)) {
          if (under(y)) mates.add(v);
          return;
        }
        outsiders.add(v);
        const int leaf = leaf_.leafOf[static_cast<std::size_t>(where_[static_cast<std::size_t>(y)])];
        if (v == Verdict::kSlow || v == Verdict::kFine) measuredFrom.insert(leaf);
        if (v == Verdict::kSlow) slowFrom.insert(leaf);
      });
      const bool spread = slowFrom.size() >= std::min<std::size_t>(2, measuredFrom.size());
      if (outsiders.mostlySlow(share_) && spread && mates.mostlyFine(share_) && asFastAsTheLeaf(x)) in.push_back(x);
    }
    return in;
  }

  // The leafmates' pairs into x at the leaf's own rate: their median at least --slow-threshold of
  // the median of the leaf's pairs that do not touch x (true without such pairs to compare).
  bool asFastAsTheLeaf(int x) const {
    std::vector<double> into;
    std::vector<double> rest;
    for (int a : leaf_.under) {
      for (int b : leaf_.under) {
        if (a == b || a >= in_.view.n() || b >= in_.view.n()) continue;
        const float v = in_.view.values.at(a, b);
        if (!std::isfinite(v)) continue;
        if (b == x) {
          into.push_back(v);
        } else if (a != x) {
          rest.push_back(v);
        }
      }
    }
    return into.empty() || rest.empty() || core::median(into) >= threshold_ * core::median(rest);
  }

  // Slow pairs across the leaf's uplinks that the shapes missed, as where each node met only a few
  // peers (quick mode): at the finding's `level` (kOneCauseSpread), and neither end slow
  // otherwise. Out of the leaf: from a node with no slow pair with its leafmates (its other pairs
  // out may cross the same cable), to one no other node outside the leaf reaches slowly (its few
  // other pairs may all be noisy). Into it: to a node no leafmate reaches slowly, from one that
  // reaches more nodes well than slowly.
  std::vector<std::pair<int, int>> stragglers(double level) const {
    std::vector<std::pair<int, int>> out;
    for (int s : leaf_.under) {
      for (int d : leaf_.outside) {
        if (slowAt(s, d, level) && fineWithMates(s) && slowFromNoneOutside(d, s)) out.emplace_back(s, d);
        if (slowAt(d, s, level) && mostlyFineFrom(d, s) && slowFromNoMate(s)) out.emplace_back(d, s);
      }
    }
    return out;
  }

  // Nodes under the leaf reached slowly from outside it at `level` whose leafmates' pairs to them
  // are too few to show the inward shape (quick mode), none of them slow: those pairs.
  std::vector<std::pair<int, int>> slowInto(double level) const {
    std::vector<std::pair<int, int>> out;
    for (int x : leaf_.under) {
      Count outside;
      std::vector<std::pair<int, int>> mine;
      for (int s : leaf_.outside) {
        outside.add(at(s, x));
        if (slowAt(s, x, level)) mine.emplace_back(s, x);
      }
      if (outside.mostlySlow(share_) && slowFromNoMate(x)) out.insert(out.end(), mine.begin(), mine.end());
    }
    return out;
  }

  Verdict at(int x, int y) const {
    if (x >= in_.view.n() || y >= in_.view.n() || in_.isExplained(x, y)) return Verdict::kUnmeasured;
    return in_.view.at(x, y).verdict;
  }

 private:
  bool slowAt(int x, int y, double level) const {
    if (at(x, y) != Verdict::kSlow) return false;
    const double v = in_.view.values.at(x, y);
    return v <= kOneCauseSpread * level && v * kOneCauseSpread >= level;
  }
  // x under the leaf and its leafmates: no slow pair either way (pairs inside the leaf cross no
  // uplink, so x's own cable is fine)
  bool fineWithMates(int x) const {
    for (int m : leaf_.under) {
      if (m != x && (at(x, m) == Verdict::kSlow || at(m, x) == Verdict::kSlow)) return false;
    }
    return true;
  }
  // x's other pairs out: more of them fine than slow
  bool mostlyFineFrom(int x, int but) const {
    Count c;
    forEachPeer(in_.view.values, x, [&](int y) {
      if (y != but) c.add(at(x, y));
    });
    return c.fine > c.slow;
  }
  bool slowFromNoneOutside(int d, int but) const {
    Count c;
    for (int x : leaf_.outside) {
      if (x != d && x != but && !slowSender(x)) c.add(at(x, d));
    }
    return c.slow == 0;
  }
  bool slowSender(int x) const {
    return static_cast<std::size_t>(x) < slowSenders_.size() && slowSenders_[static_cast<std::size_t>(x)];
  }
  bool slowFromNoMate(int x) const {
    Count c;
    for (int m : leaf_.under) {
      if (m != x) c.add(at(m, x));
    }
    return c.slow == 0;
  }

  static constexpr int kNowhere = -2;
  static constexpr int kUnder = -1;
  bool outside(int x) const { return x >= 0 && x < in_.view.n() && where_[static_cast<std::size_t>(x)] >= 0; }
  bool under(int x) const { return x >= 0 && x < in_.view.n() && where_[static_cast<std::size_t>(x)] == kUnder; }

  const InterNode& in_;
  const Leaf& leaf_;
  double share_;
  double threshold_;
  const std::vector<char>& slowSenders_;
  std::vector<int> where_;  // per node: kUnder, its index in leaf_.outside, or kNowhere
};

// The switches with two uplinks at least. One that shares its nodes with another (a pod's spines,
// each above every node of the pod) is `shared`: which of them carries a pair is the routing's,
// so its shapes name no one cable of its own; they still count towards a spine above them.
std::vector<Leaf> leavesOf(const FabricPaths& paths) {
  std::vector<Leaf> leaves;
  const std::set<int> placed(paths.placed.begin(), paths.placed.end());
  std::map<std::vector<int>, int> above;  // nodes below -> how many switches with uplinks
  for (const FabricSuspect& u : paths.suspects) {
    if (u.kind == FabricSuspect::Kind::kUplinks) ++above[u.nodesBelow];
  }
  for (std::size_t s = 0; s < paths.suspects.size(); ++s) {
    const FabricSuspect& u = paths.suspects[s];
    if (u.kind != FabricSuspect::Kind::kUplinks || u.uplinks.size() < 2 || u.nodesBelow.empty()) continue;
    Leaf leaf{static_cast<int>(s), u.nodesBelow, {}, {}, above[u.nodesBelow] > 1};
    std::set_difference(placed.begin(), placed.end(), u.nodesBelow.begin(), u.nodesBelow.end(),
                        std::back_inserter(leaf.outside));
    for (int o : leaf.outside) leaf.leafOf.push_back(paths.above[static_cast<std::size_t>(o)].front().front());
    if (leaf.outside.size() >= 2) leaves.push_back(std::move(leaf));
  }
  return leaves;
}

// The pairs of both shapes: from every node under the leaf to each outward destination, into each
// inward node from every node outside.
std::vector<std::pair<int, int>> pairsOf(const Leaf& leaf, const std::vector<int>& outward, const std::vector<int>& inward) {
  std::vector<std::pair<int, int>> pairs;
  for (int d : outward) {
    for (int s : leaf.under) pairs.emplace_back(s, d);
  }
  for (int x : inward) {
    for (int s : leaf.outside) pairs.emplace_back(s, x);
  }
  return pairs;
}

// The pairs that clear the ends: the rest of the fabric into each outward destination, the
// leafmates into each inward node.
Count clearing(const Shapes& shapes, const Leaf& leaf, const std::vector<int>& outward, const std::vector<int>& inward) {
  Count c;
  for (int d : outward) {
    for (int x : leaf.outside) {
      if (x != d) c.add(shapes.at(x, d));
    }
  }
  for (int x : inward) {
    for (int m : leaf.under) {
      if (m != x) c.add(shapes.at(m, x));
    }
  }
  return c;
}

std::string namesOf(const core::Topology& topo, const std::vector<int>& nodes) {
  return nodesText(topo, nodes, 6);
}

Finding cableFinding(const InterNode& in, const core::FabricGraph& graph, const FabricPaths& paths, const Leaf& leaf,
                     const std::vector<int>& outward, const std::vector<int>& inward, const Evidence& e,
                     const Count& clear) {
  const FabricSuspect& u = paths.suspects[static_cast<std::size_t>(leaf.uplinks)];
  const std::string leafName = graph.devices[static_cast<std::size_t>(u.device)].name;
  Finding f;
  f.kind = core::FindingKind::kUplink;
  f.subject = suspectName(graph, u);
  f.expected = in.base.bandwidth;
  f.unit = "GB/s";
  f.measured = core::median(e.slowValues);
  f.ratio = f.measured / f.expected;
  std::vector<std::string> parts;
  if (!outward.empty()) {
    parts.push_back(fmt::format("every node under it reaches {} destinations outside it slowly ({}) while the rest "
                                "of the fabric reaches them well",
                                outward.size(), namesOf(in.topo, outward)));
  }
  if (!inward.empty()) {
    parts.push_back(fmt::format("{} under it ({}) slow from outside the leaf and fine from {} leafmates",
                                inward.size() == 1 ? "one node" : fmt::format("{} nodes", inward.size()),
                                namesOf(in.topo, inward), inward.size() == 1 ? "its" : "their"));
  }
  f.message = fmt::format(
      "one cable among the {} uplinks of {}: {}; {} of {} such node pairs slow, {} vs {} baseline ({:.2f}x) - "
      "a fabric that forwards by destination sends each such set over one cable: the leaf's forwarding table "
      "(ibroute) names the port that carries them; check that cable and its two ports (perfquery, ibportstate)",
      u.uplinks.size(), leafName, fmt::join(parts, "; and "), e.slow, e.judged, core::formatRate(f.measured),
      core::formatRate(f.expected), f.ratio);
  f.severity = severityFor(f.ratio);
  setConfidence(f, e, clear.judged > 0 ? static_cast<double>(clear.fine) / clear.judged : 0.0, true);
  return f;
}

// The slow pairs of the shapes lie at one level: the median's kOneCauseSpread.
bool oneLevel(const Evidence& e) {
  if (e.slowValues.empty()) return false;
  const double level = core::median(e.slowValues);
  return std::all_of(e.slowValues.begin(), e.slowValues.end(),
                     [&](double v) { return v <= kOneCauseSpread * level && v * kOneCauseSpread >= level; });
}

// The switches the leaves' uplinks lead to, by name.
std::vector<std::string> spinesAbove(const core::FabricGraph& graph, const FabricPaths& paths, const std::vector<const Leaf*>& leaves) {
  std::set<std::string> names;
  for (const Leaf* leaf : leaves) {
    for (int i : paths.suspects[static_cast<std::size_t>(leaf->uplinks)].uplinks) {
      names.insert(graph.devices[static_cast<std::size_t>(graph.links[static_cast<std::size_t>(i)].b)].name);
    }
  }
  return {names.begin(), names.end()};
}

// What a spine finding advises, `into` being the nodes routed down it.
std::string spineAdvice(const InterNode& in, const std::vector<int>& into) {
  return fmt::format(
      "a fabric that forwards by destination sends all traffic into one node down one spine, so one spine carries "
      "them all; the forwarding tables say which (ibtracert from another leaf to {}): check that spine and its ports "
      "(perfquery)",
      nodeName(in.topo, into.front()));
}

Finding spineFinding(const InterNode& in, const std::vector<std::string>& spines, int leaves, const std::vector<int>& into,
                     const Evidence& e, const Count& clear) {
  Finding f;
  f.kind = core::FindingKind::kSwitch;
  f.subject = fmt::format("one of {} spines ({} .. {})", spines.size(), spines.front(), spines.back());
  f.expected = in.base.bandwidth;
  f.unit = "GB/s";
  f.measured = core::median(e.slowValues);
  f.ratio = f.measured / f.expected;
  f.message = fmt::format(
      "one spine, or every cable of one: under each of {} leaves, the nodes {} are reached slowly from the other "
      "leaves and well from their leafmates; {} of {} such node pairs slow, {} vs {} baseline ({:.2f}x) - {}",
      leaves, nodesText(in.topo, into, 8), e.slow, e.judged, core::formatRate(f.measured), core::formatRate(f.expected),
      f.ratio, spineAdvice(in, into));
  f.severity = severityFor(f.ratio);
  setConfidence(f, e, clear.judged > 0 ? static_cast<double>(clear.fine) / clear.judged : 0.0, true);
  return f;
}

// A spine whose pairs sit near the bar shows as a group: the nodes routed down it, under 3
// leaves and half of them at least, reached from outside their leaf mostly slowly or at
// kShiftedSpine or less of the other nodes' rate (each node's median inbound pair), every one
// below the lowest tenth of the others, while no leafmate reaches them slowly and they send at
// the others' rate (not their own cables): each pair may sit near the bar, the group does not. A
// minority of the nodes (else it is the fabric's rate), each with kShiftedInbound such pairs.
constexpr double kShiftedSpine = 0.8;
constexpr std::size_t kShiftedInbound = 4;

// A node's measured pairs with the nodes outside its leaf, one way, none explained yet.
struct Side {
  int node = 0;
  int leaf = 0;  // index into the leaves
  double median = 0;
  bool mostlySlow = false;  // judged so, at --attribute-share
  std::vector<std::pair<int, int>> pairs;
  std::vector<double> values;
  std::vector<int> otherLeaf;  // per pair, the other end's leaf (an index into the leaves)
};

// One pass over the measured cells (not a lookup per pair of nodes, most of them unmeasured in
// quick mode).
std::vector<Side> sidesOf(const InterNode& in, const std::vector<Leaf>& leaves, bool inbound, double share) {
  std::vector<int> leafOf(static_cast<std::size_t>(std::max(in.view.n(), 0)), -1);
  for (std::size_t l = 0; l < leaves.size(); ++l) {
    for (int x : leaves[l].under) {
      if (x < in.view.n()) leafOf[static_cast<std::size_t>(x)] = static_cast<int>(l);
    }
  }
  std::vector<Side> all(leafOf.size());
  std::vector<Count> judged(leafOf.size());
  in.view.values.forEachCell([&](int a, int b, float v) {
    const int la = leafOf[static_cast<std::size_t>(a)];
    const int lb = leafOf[static_cast<std::size_t>(b)];
    if (la < 0 || lb < 0 || la == lb || in.isExplained(a, b)) return;
    const int x = inbound ? b : a;
    Side& side = all[static_cast<std::size_t>(x)];
    side.pairs.emplace_back(a, b);
    side.values.push_back(v);
    side.otherLeaf.push_back(inbound ? la : lb);
    judged[static_cast<std::size_t>(x)].add(in.view.at(a, b).verdict);
  });
  std::vector<Side> out;
  for (std::size_t x = 0; x < all.size(); ++x) {
    Side& side = all[x];
    if (leafOf[x] < 0 || side.values.size() < kShiftedInbound) continue;
    side.node = static_cast<int>(x);
    side.leaf = leafOf[x];
    side.median = core::median(side.values);
    side.mostlySlow = judged[x].mostlySlow(share);
    out.push_back(std::move(side));
  }
  return out;
}

double medianOf(const std::vector<Side>& sides) {
  std::vector<double> medians;
  for (const Side& s : sides) medians.push_back(s.median);
  return medians.empty() ? 0.0 : core::median(medians);
}

// Whether the other leaves reach the node below `below`, leaf by leaf (each leaf's median pair),
// two of them and half of those that measured it at least: a spine slows the pairs from every
// leaf, one leaf's cable up to it those from that leaf only (which, where the node met few peers
// but many of that leaf's nodes, can hold the node's median low).
bool slowFromManyLeaves(const Side& side, double below) {
  std::map<int, std::vector<double>> byLeaf;
  for (std::size_t i = 0; i < side.values.size(); ++i) byLeaf[side.otherLeaf[i]].push_back(side.values[i]);
  std::size_t slow = 0;
  for (auto& [leaf, values] : byLeaf) slow += core::median(values) < below ? 1 : 0;
  return slow >= 2 && 2 * slow >= byLeaf.size();
}

// The shifted nodes' inbound sides, and the other nodes' inbound rate (`rate`); none when the group
// is not one spine's.
std::vector<Side> shiftedInbound(const InterNode& in, const std::vector<Leaf>& leaves, double share, double& rate) {
  const std::vector<Side> sides = sidesOf(in, leaves, true, share);
  std::vector<Side> shifted;
  std::vector<double> rest;
  std::set<int> spanned;
  std::set<int> known;
  const double all = medianOf(sides);
  for (const Side& side : sides) {
    known.insert(side.leaf);
    if (side.mostlySlow || side.median <= kShiftedSpine * all) {
      shifted.push_back(side);
      spanned.insert(side.leaf);
    } else {
      rest.push_back(side.median);
    }
  }
  if (shifted.empty() || 2 * shifted.size() > sides.size() || spanned.size() < 3 || 2 * spanned.size() < known.size()) {
    return {};
  }
  std::sort(rest.begin(), rest.end());
  rate = core::median(rest);
  const double lowTenth = rest[rest.size() / 10];
  const std::vector<Side> sends = sidesOf(in, leaves, false, share);
  const double sendRate = medianOf(sends);
  for (const Side& side : shifted) {
    const auto own = std::find_if(sends.begin(), sends.end(), [&](const Side& o) { return o.node == side.node; });
    if (!(side.median < lowTenth) || (own != sends.end() && (own->mostlySlow || own->median <= kShiftedSpine * sendRate)) ||
        !slowFromManyLeaves(side, lowTenth)) {
      return {};
    }
  }
  return shifted;
}

// The spine named from the shifted nodes (shiftedInbound), `explains` given their pairs from
// outside; nothing when a leafmate reaches one of them slowly or below its leaf's own rate (its
// own cable). Where no leafmate measured a pair to them (quick mode) the margin is one part
// against that many leaves' faults at once.
std::optional<Finding> shiftedSpine(RuleContext& ctx, const std::vector<Leaf>& all, const std::vector<char>& senders,
                                    std::vector<std::pair<int, int>>& explains) {
  const InterNode& in = ctx.inter;
  const FabricPaths& paths = ctx.fabricPaths();
  std::vector<Leaf> leaves;  // those right above their nodes (not a pod's switches)
  for (const Leaf& leaf : all) {
    const auto& first = paths.above[static_cast<std::size_t>(leaf.under.front())].front();
    const int device = paths.suspects[static_cast<std::size_t>(leaf.uplinks)].device;
    if (std::find(first.begin(), first.end(), device) != first.end()) leaves.push_back(leaf);
  }
  double rate = 0;
  const std::vector<Side> shifted = shiftedInbound(in, leaves, ctx.c.attributeShare, rate);
  if (shifted.empty()) return std::nullopt;
  Count clear;
  Evidence e;
  std::vector<int> into;
  std::vector<const Leaf*> spanned;
  for (const Side& side : shifted) {
    const Leaf& leaf = leaves[static_cast<std::size_t>(side.leaf)];
    const Shapes shapes(in, leaf, ctx.c, senders);
    for (int m : leaf.under) {
      if (m == side.node) continue;
      if (shapes.at(m, side.node) == Verdict::kSlow) return std::nullopt;
      clear.add(shapes.at(m, side.node));
    }
    if (!shapes.asFastAsTheLeaf(side.node)) return std::nullopt;
    into.push_back(side.node);
    if (std::find(spanned.begin(), spanned.end(), &leaf) == spanned.end()) spanned.push_back(&leaf);
    for (const auto& [a, b] : side.pairs) e.add(in.view.at(a, b), in.view.values.at(a, b));
    explains.insert(explains.end(), side.pairs.begin(), side.pairs.end());
  }
  std::sort(into.begin(), into.end());
  const std::vector<std::string> spines = spinesAbove(ctx.topo.fabric, paths, spanned);
  Finding f;
  f.kind = core::FindingKind::kSwitch;
  f.subject = fmt::format("one of {} spines ({} .. {})", spines.size(), spines.front(), spines.back());
  f.expected = rate;
  f.unit = "GB/s";
  f.measured = core::median(e.values);
  f.ratio = f.measured / f.expected;
  const double margin = clear.judged > 0 ? static_cast<double>(clear.fine) / clear.judged
                                         : 1.0 - std::pow(0.5, static_cast<double>(spanned.size()));
  f.confidence = margin * (1.0 - std::pow(0.5, static_cast<double>(into.size())));
  f.severity = severityFor(f.ratio);
  f.message = fmt::format(
      "one spine, or every cable of one: under each of {} leaves, the nodes {} are reached from the other leaves "
      "at {} vs {} of the other nodes ({:.2f}x; each such node's median pair below every other node's but a tenth), "
      "{} of {} pairs from their leafmates fine; {} of {} such node pairs below the bar - {}; confidence {:.2f} "
      "({} nodes shifted, margin {:.2f})",
      spanned.size(), nodesText(in.topo, into, 8), core::formatRate(f.measured), core::formatRate(f.expected), f.ratio,
      clear.fine, clear.judged, e.slow, e.judged, spineAdvice(in, into), f.confidence, into.size(), margin);
  return f;
}

// Every leaf's inward shape at once, and no outward one: not a cable per leaf but one spine, or
// every cable of one, that all of those nodes are routed down from (a cable down to each leaf,
// and the cables up to it, which every other leaf's pairs to them cross as well: no leaf is fine
// to them, so no outward shape shows). At least 3 leaves and half of them: two leaves' cables
// failing at once stay two findings. Names the spines as candidates: which one carries those
// nodes is the routing's, not in the fabric file. With it go the nodes slow from outside their
// leaf at its level whose leafmates measured too few pairs to them to show the shape, none slow.
// Else the same spine as a group above the bar (shiftedSpine).
void spineRule(RuleContext& ctx, const std::vector<Leaf>& leaves, const std::vector<char>& senders,
               std::vector<Finding>& findings) {
  InterNode& in = ctx.inter;
  std::vector<const Leaf*> shaped;
  std::vector<int> into;
  std::vector<std::pair<int, int>> pairs;
  Count clear;
  for (const Leaf& leaf : leaves) {
    if (leaf.under.size() < 2) continue;
    const Shapes shapes(in, leaf, ctx.c, senders);
    const std::vector<int> inward = shapes.inward();
    if (inward.empty() || !shapes.outward().empty()) continue;
    shaped.push_back(&leaf);
    into.insert(into.end(), inward.begin(), inward.end());
    const auto mine = pairsOf(leaf, {}, inward);
    pairs.insert(pairs.end(), mine.begin(), mine.end());
    const Count c = clearing(shapes, leaf, {}, inward);
    clear.judged += c.judged;
    clear.fine += c.fine;
  }
  Evidence e;
  for (const auto& [s, d] : pairs) e.add(in.view.at(s, d), in.view.values.at(s, d));
  if (shaped.size() >= 3 && 2 * shaped.size() >= leaves.size() && oneLevel(e)) {
    std::sort(into.begin(), into.end());
    findings.push_back(spineFinding(in, spinesAbove(ctx.topo.fabric, ctx.fabricPaths(), shaped),
                                    static_cast<int>(shaped.size()), into, e, clear));
    const double level = core::median(e.slowValues);
    for (const Leaf& leaf : leaves) {
      const auto more = Shapes(in, leaf, ctx.c, senders).slowInto(level);
      pairs.insert(pairs.end(), more.begin(), more.end());
    }
  } else {
    pairs.clear();
    std::optional<Finding> f = shiftedSpine(ctx, leaves, senders, pairs);
    if (!f) return;
    findings.push_back(std::move(*f));
  }
  for (const auto& [s, d] : pairs) {
    if (in.view.at(s, d).verdict == Verdict::kSlow) in.explainAbove(s, d);
    if (!in.isExplained(d, s) && in.view.at(d, s).verdict == Verdict::kSlow) in.explainAbove(d, s);
  }
}

}  // namespace

void cableRule(RuleContext& ctx, std::vector<Finding>& findings) {
  const core::FabricGraph& graph = ctx.topo.fabric;
  if (graph.devices.empty()) return;
  const FabricPaths& paths = ctx.fabricPaths();
  InterNode& in = ctx.inter;
  const std::vector<Leaf> leaves = leavesOf(paths);
  const std::vector<char> senders = slowSendersOf(in, ctx.c.attributeShare);
  spineRule(ctx, leaves, senders, findings);
  for (const Leaf& leaf : leaves) {
    if (leaf.shared) continue;
    const Shapes shapes(in, leaf, ctx.c, senders);
    const std::vector<int> outward = shapes.outward();
    const std::vector<int> inward = leaf.under.size() >= 2 ? shapes.inward() : std::vector<int>{};
    if (outward.empty() && inward.empty()) continue;
    const std::vector<std::pair<int, int>> pairs = pairsOf(leaf, outward, inward);
    Evidence e;
    for (const auto& [s, d] : pairs) {
      if (!in.isExplained(s, d)) e.add(in.view.at(s, d), in.view.values.at(s, d));
    }
    if (!oneLevel(e)) continue;
    findings.push_back(cableFinding(in, graph, paths, leaf, outward, inward, e, clearing(shapes, leaf, outward, inward)));
    std::vector<std::pair<int, int>> explains = pairs;
    const std::vector<std::pair<int, int>> more = shapes.stragglers(core::median(e.slowValues));
    explains.insert(explains.end(), more.begin(), more.end());
    for (const auto& [s, d] : explains) {
      if (in.view.at(s, d).verdict == Verdict::kSlow) in.explainAbove(s, d);
      if (!in.isExplained(d, s) && in.view.at(d, s).verdict == Verdict::kSlow) in.explainAbove(d, s);
    }
  }
}

}  // namespace fabricmap::orchestrator::internal
