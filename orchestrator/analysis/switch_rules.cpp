// The switch rule (see rules.h): with the fabric's topology (`--fabric`), slow node pairs blamed on
// the smallest set of switches, switch uplinks and nodes that explains them, the healthy pairs as
// evidence of innocence (the greedy cover of NetBouncer, Tan et al., NSDI'19, over the paths of
// fabric_paths.h).
//
// Every judged node pair among the nodes the fabric places is evidence for the suspects it
// crosses: the switches and uplink groups it certainly traverses, and its ends as nodes (both ways,
// the sender's egress, the receiver's ingress). A slow pair is evidence against a suspect only
// near the suspect's level (kOneCause). A suspect is consistent when at least --attribute-share of
// its judged pairs are slow so (2 at least; a switch with uplinks, also of the pairs among the
// nodes under it, which its uplinks do not carry). Greedily, the consistent suspect that explains
// the most slow pairs not yet explained is chosen (then the one with fewer healthy pairs, then the
// narrower), until none explains 2 more. Chosen switches and uplinks become findings and their
// slow pairs are explained, so the node, rank and link rules do not name the nodes under them;
// chosen nodes are left to the node rule, which names them with its own evidence. Suspects that
// no pair tells apart are a tie, named in the finding at the severity of the fault. A leaf chosen
// as its uplinks whose own inner pairs run shifted below other leaves' is named as the switch
// (shiftedLeaf).
//
// A part the fabric's baseline cannot see is then judged alone: when a first round that ran slow
// fixed the baseline low and noisy (the bar at its 0.1x floor), a leaf uplink at 0.27x went unnamed
// although every pair through it measured far below every pair that did not cross it (two-level
// scenario 13 of bench/scenarios.py, 2 of 6 runs). As the node rule judges a node against the pairs
// without it, a part is judged against the pairs that do not cross it (their median, spread and
// gap), when those are at least kAloneCells and its own pairs fewer (the one spine of a small
// fabric, crossed by most pairs, sets the baseline and is never judged so), with two nodes or more
// under it (one node: a tie, the node rule's), and named only on whole evidence: every pair through
// it slow, each below every healthy pair that does not cross it.
#include <algorithm>
#include <cmath>
#include <limits>
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

// One judged directed node pair and every suspect it is evidence for.
struct PairCase {
  int x = 0;
  int y = 0;
  Judged judged;
  float value = 0;
  std::vector<int> suspects;
};

// Suspects past the fabric's own: per node, itself (both ways), its egress and its ingress.
struct Suspects {
  int fabric = 0;
  int node(int x) const { return fabric + 3 * x; }
  int egress(int x) const { return fabric + 3 * x + 1; }
  int ingress(int x) const { return fabric + 3 * x + 2; }
  int count(int nodes) const { return fabric + 3 * nodes; }
  bool isFabric(int s) const { return s < fabric; }
};

// Whether x and y hang on the same one leaf.
bool sameLeaf(const FabricPaths& paths, int x, int y) {
  const auto& ax = paths.above[static_cast<std::size_t>(x)];
  const auto& ay = paths.above[static_cast<std::size_t>(y)];
  return !ax.empty() && !ay.empty() && ax.front().size() == 1 && ax.front() == ay.front();
}

// Pairs inside one leaf cross two cables and no uplink: healthy, they run faster than pairs across
// leaves (2x on the simulated 2:1 tree, whose rounds share uplinks), so such a pair is judged
// against the median of the pairs inside leaves, where that is higher: a leaf whose own ports are
// slow slows its inner pairs far below their class though not below the fabric's, and is then a
// switch, not its uplinks. Needs inner pairs under 3 leaves at least (else 0: no such bar).
// The placed nodes grouped by the one leaf they hang on (nodes under several first-level switches
// are in none: their pairs are no leaf's own).
std::map<std::vector<int>, std::vector<int>> nodesByLeaf(const FabricPaths& paths) {
  std::map<std::vector<int>, std::vector<int>> out;
  for (int x : paths.placed) {
    const auto& above = paths.above[static_cast<std::size_t>(x)];
    if (!above.empty() && above.front().size() == 1) out[above.front()].push_back(x);
  }
  return out;
}

// The measured pairs inside each leaf, per leaf.
std::map<std::vector<int>, std::vector<double>> innerPairs(const InterNode& in, const FabricPaths& paths) {
  std::map<std::vector<int>, std::vector<double>> out;
  for (const auto& [leaf, nodes] : nodesByLeaf(paths)) {
    for (int x : nodes) {
      for (int y : nodes) {
        if (x == y || x >= in.view.n() || y >= in.view.n()) continue;
        const float v = in.m.nodeBw.at(x, y);
        if (std::isfinite(v)) out[leaf].push_back(v);
      }
    }
  }
  return out;
}

double innerBaseline(const InterNode& in, const FabricPaths& paths) {
  std::vector<double> values;
  const auto inner = innerPairs(in, paths);
  for (const auto& [leaf, mine] : inner) values.insert(values.end(), mine.begin(), mine.end());
  return inner.size() >= 3 ? core::median(values) : 0.0;
}

Judged judgedAt(const JudgedMatrix& view, int x, int y, double inner) {
  if (inner <= 0) return view.at(x, y);
  const float variation = core::cellOr(view.cv, x, y);
  core::Expected e = view.base.forCell(variation);
  e.bandwidth = std::max(e.bandwidth, inner);
  return view.judge(view.values.at(x, y), core::worstAt(view.worst, view.values, x, y), variation, e, view.c);
}

// Per node of `n`: whether the fabric places it.
std::vector<char> placedOf(const FabricPaths& paths, int n) {
  std::vector<char> placed(static_cast<std::size_t>(std::max(n, 0)), 0);
  for (int x : paths.placed) {
    if (x < n) placed[static_cast<std::size_t>(x)] = 1;
  }
  return placed;
}

// Every measured pair among the placed nodes (the measured cells only: a quick run's matrix holds a
// few per node, and a lookup per pair of nodes is quadratic).
std::vector<PairCase> casesOf(const InterNode& in, const JudgedMatrix& view, const FabricPaths& paths, const Suspects& s) {
  std::vector<PairCase> cases;
  const double inner = innerBaseline(in, paths);
  const std::vector<char> placed = placedOf(paths, view.n());
  view.values.forEachCell([&](int x, int y, float value) {
    if (x == y || !placed[static_cast<std::size_t>(x)] || !placed[static_cast<std::size_t>(y)]) return;
    const Judged j = sameLeaf(paths, x, y) ? judgedAt(view, x, y, inner) : view.at(x, y);
    if (j.verdict != Verdict::kSlow && j.verdict != Verdict::kFine) return;  // noisy: no evidence
    PairCase c{x, y, j, value, paths.crossed(x, y)};
    if (c.suspects.empty()) return;  // no shared switch: not a path the fabric describes
    c.suspects.insert(c.suspects.end(), {s.node(x), s.node(y), s.egress(x), s.ingress(y)});
    cases.push_back(std::move(c));
  });
  return cases;
}

// One cause slows the pairs through it alike: alone on a slowed part, each reads about the part's
// rate. A slow pair more than kOneCause times faster than the median of the slow pairs through a
// part is slow for another reason (host noise, a mild second fault), not evidence for that part:
// the cause that holds pairs at 0.02x does not leave another at 0.7x.
constexpr float kOneCause = 4.0f;

struct Tally {
  std::vector<int> judged;
  std::vector<int> slow;           // slow at the suspect's level
  std::vector<float> level;        // per suspect: the median of its slow pairs' values
  std::vector<int> innerJudged;    // per switch: on the pairs its uplinks do not carry
  std::vector<int> innerSlow;
  std::vector<int> uplinksOf;      // per suspect: a switch's uplinks suspect, -1 for none

  // A slow pair is evidence against suspect s when it is within kOneCause of s's level.
  bool evidence(const PairCase& c, int s) const {
    return c.judged.verdict == Verdict::kSlow && c.value <= kOneCause * level[static_cast<std::size_t>(s)];
  }
};

bool crosses(const PairCase& c, int s) { return std::find(c.suspects.begin(), c.suspects.end(), s) != c.suspects.end(); }

std::vector<float> levelsOf(const std::vector<PairCase>& cases, int suspects) {
  std::vector<std::vector<double>> values(static_cast<std::size_t>(suspects));
  for (const PairCase& c : cases) {
    if (c.judged.verdict != Verdict::kSlow) continue;
    for (int s : c.suspects) values[static_cast<std::size_t>(s)].push_back(c.value);
  }
  std::vector<float> level(values.size(), 0.0f);
  for (std::size_t s = 0; s < values.size(); ++s) {
    if (!values[s].empty()) level[s] = static_cast<float>(core::median(values[s]));
  }
  return level;
}

Tally tallyOf(const std::vector<PairCase>& cases, int suspects, std::vector<int> uplinksOf) {
  const auto n = static_cast<std::size_t>(suspects);
  Tally t{std::vector<int>(n), std::vector<int>(n), levelsOf(cases, suspects), std::vector<int>(n), std::vector<int>(n),
          std::move(uplinksOf)};
  t.uplinksOf.resize(n, -1);
  for (const PairCase& c : cases) {
    for (int s : c.suspects) {
      const auto i = static_cast<std::size_t>(s);
      const bool slow = t.evidence(c, s);
      ++t.judged[i];
      t.slow[i] += slow;
      if (t.uplinksOf[i] >= 0 && !crosses(c, t.uplinksOf[i])) {
        ++t.innerJudged[i];
        t.innerSlow[i] += slow;
      }
    }
  }
  return t;
}

// At least `share` of its judged pairs slow, 2 at least. A switch with uplinks must be so also on the
// pairs its uplinks do not carry (those among the nodes under it): else its uplinks explain its slow
// pairs, and one noisy-slow pair among its nodes would make the whole switch the wider cover (an
// emulated leaf whose uplink was throttled was once named a switch so).
bool consistent(const Tally& t, std::size_t s, double share) {
  const auto mostlySlow = [&](int judged, int slow) { return judged >= 2 && slow >= share * judged; };
  if (!mostlySlow(t.judged[s], t.slow[s])) return false;
  return t.uplinksOf[s] < 0 || mostlySlow(t.innerJudged[s], t.innerSlow[s]);
}

// The greedy cover: the suspects chosen, in order.
std::vector<int> cover(const std::vector<PairCase>& cases, const Tally& t, double share) {
  std::vector<char> explained(cases.size(), 0);
  std::vector<int> chosen;
  for (;;) {
    std::vector<int> newly(t.judged.size(), 0);
    for (std::size_t i = 0; i < cases.size(); ++i) {
      if (explained[i]) continue;
      for (int s : cases[i].suspects) newly[static_cast<std::size_t>(s)] += t.evidence(cases[i], s);
    }
    std::optional<std::size_t> best;
    const auto better = [&](std::size_t a, std::size_t b) {
      if (newly[a] != newly[b]) return newly[a] > newly[b];
      const int fineA = t.judged[a] - t.slow[a];
      const int fineB = t.judged[b] - t.slow[b];
      return fineA != fineB ? fineA < fineB : t.judged[a] < t.judged[b];
    };
    for (std::size_t s = 0; s < newly.size(); ++s) {
      if (consistent(t, s, share) && (!best || better(s, *best))) best = s;
    }
    if (!best || newly[*best] < 2) return chosen;
    const int picked = static_cast<int>(*best);
    chosen.push_back(picked);
    for (std::size_t i = 0; i < cases.size(); ++i) {
      if (crosses(cases[i], picked) && (t.evidence(cases[i], picked) || cases[i].judged.verdict != Verdict::kSlow)) {
        explained[i] = 1;
      }
    }
  }
}

// The suspects no judged pair tells apart from `s`: consistent, and crossed by exactly its pairs.
std::vector<int> tiedWith(const std::vector<PairCase>& cases, const Tally& t, int s, double share) {
  std::vector<int> ties;
  for (std::size_t o = 0; o < t.judged.size(); ++o) {
    const int other = static_cast<int>(o);
    if (other == s || t.judged[o] != t.judged[static_cast<std::size_t>(s)] || !consistent(t, o, share)) continue;
    if (std::all_of(cases.begin(), cases.end(), [&](const PairCase& c) { return crosses(c, s) == crosses(c, other); })) {
      ties.push_back(other);
    }
  }
  return ties;
}

struct Context {
  const InterNode& in;
  const core::FabricGraph& graph;
  const FabricPaths& paths;
  const Suspects& suspects;
  const JudgedMatrix& view;            // the node pairs judged against `base`
  const std::vector<PairCase>& cases;  // those the fabric describes, not noisy
  const Tally& tally;                  // of `cases`
  const core::Expected& base;
  const char* against;  // what `base` is, in a message
};

// The pairs among the nodes under suspect `s` that do not cross it: fine, they clear those nodes
// (an uplink fault leaves the pairs inside its leaf fast). A noisy one clears them too when its
// lowest sample is at least twice `level` (the highest slow value through `s`): a node slow enough
// to explain the pairs through `s` would hold its own pairs that low (an emulated leaf's one pair
// between its two nodes, noisy one way at 0.78-1.06x beside an uplink at 0.01x, halved the margin).
// Without such pairs (a whole leaf switch), one part explaining k nodes' slowness against k faults
// at once: 1 - 2^-k (a tie with the node for k = 1).
double marginOf(const Context& x, int s, double level, int& among, int& fine) {
  const FabricSuspect& f = x.paths.suspects[static_cast<std::size_t>(s)];
  among = fine = 0;
  for (int a : f.nodesBelow) {
    for (int b : f.nodesBelow) {
      if (a == b || a >= x.view.n() || b >= x.view.n()) continue;
      const std::vector<int> crossed = x.paths.crossed(a, b);
      if (crossed.empty() || std::find(crossed.begin(), crossed.end(), s) != crossed.end()) continue;
      const Verdict v = x.view.at(a, b).verdict;
      const bool clears = v == Verdict::kFine ||
                          (v == Verdict::kNoisy && core::worstAt(x.view.worst, x.view.values, a, b) >= 2 * level);
      if (!clears && v != Verdict::kSlow) continue;  // unmeasured, or noisy near the fault's level
      ++among;
      fine += clears;
    }
  }
  if (among > 0) return static_cast<double>(fine) / among * (1.0 - std::pow(0.5, among));
  return 1.0 - std::pow(0.5, static_cast<double>(f.nodesBelow.size()));
}


std::string adviceFor(core::FindingKind kind) {
  switch (kind) {
    case core::FindingKind::kSwitch: return "check the switch (its ports' counters, firmware, cooling)";
    case core::FindingKind::kSwitchPort: return "check that cable and the ports at its two ends (perfquery, ibportstate)";
    default: return "check the cables and ports between it and the level above (perfquery, ibportstate)";
  }
}

std::string labelOf(const Context& x, int s) {
  if (x.suspects.isFabric(s)) {
    const FabricSuspect& suspect = x.paths.suspects[static_cast<std::size_t>(s)];
    return (suspect.kind == FabricSuspect::Kind::kSwitch ? "switch " : "uplinks of ") + suspectName(x.graph, suspect);
  }
  const int node = (s - x.suspects.fabric) / 3;
  const char* part[] = {"", " egress", " ingress"};
  return "node " + nodeName(x.in.topo, node) + part[(s - x.suspects.fabric) % 3];
}

// `note`, when given, is said before the advice.
Finding fabricFinding(const Context& x, int s, const std::vector<int>& ties, const std::string& note = {}) {
  const FabricSuspect& suspect = x.paths.suspects[static_cast<std::size_t>(s)];
  Evidence e;
  for (const PairCase& c : x.cases) {
    if (!crosses(c, s) || (c.judged.verdict == Verdict::kSlow && !x.tally.evidence(c, s))) continue;
    e.add(c.judged, c.value);  // a slow pair far above the part's level is another cause's
  }
  Finding f;
  f.kind = suspect.kind == FabricSuspect::Kind::kSwitch ? core::FindingKind::kSwitch
           : suspect.uplinks.size() == 1                ? core::FindingKind::kSwitchPort
                                                        : core::FindingKind::kUplink;
  f.subject = suspectName(x.graph, suspect);
  f.expected = x.base.bandwidth;
  f.unit = "GB/s";
  f.measured = core::median(e.slowValues);
  f.ratio = f.measured / f.expected;
  int among = 0;
  int fine = 0;
  const double level = e.slowValues.empty() ? 0.0 : *std::max_element(e.slowValues.begin(), e.slowValues.end());
  double margin = marginOf(x, s, level, among, fine);
  std::vector<std::string> others;
  for (int t : ties) others.push_back(labelOf(x, t));
  const char* what = f.kind == core::FindingKind::kSwitch ? "switch " : f.kind == core::FindingKind::kUplink ? "uplinks of " : "cable ";
  f.message = fmt::format("{}{}: {} of {} node pairs through it slow, {} vs {} {} ({:.2f}x); under it {}{}{}{} - {}",
                          what, f.subject, e.slow, e.judged, core::formatRate(f.measured), core::formatRate(f.expected),
                          x.against, f.ratio, nodesText(x.in.topo, suspect.nodesBelow, 8),
                          among > 0 ? fmt::format(", whose {} pairs among themselves are {} fine", among, fine) : "",
                          others.empty() ? "" : fmt::format("; a tie with {}: no measured pair tells them apart",
                                                            fmt::join(others, ", ")),
                          note, adviceFor(f.kind));
  // A tie leaves the fault's place open, not the fault: its severity and confidence are the
  // slowness's (two leaves' uplinks and their spine carry the same pairs; naming the tie as
  // information hid a certain fault from a reader of errors and warnings).
  f.severity = severityFor(f.ratio);
  setConfidence(f, e, margin, true);
  return f;
}

// A leaf named by its uplinks whose own pairs (which cross no uplink) run, as a group, below
// kShiftedInner of the pairs inside other leaves and below the lowest tenth of those is the whole
// switch: an uplink fault leaves its inner pairs at their class's rate, a slow switch (its ports,
// its chip) slows them too, though latency may keep each above a bar the rounds' spread lowered.
// As a group: its median so, and three in four of them below the lowest tenth of the others;
// kShiftedPairs of its own at least, and inner pairs under 3 other leaves.
constexpr double kShiftedInner = 0.8;
constexpr std::size_t kShiftedPairs = 4;

struct Shift {
  int leaf = -1;  // the leaf's switch suspect, -1: none
  double ratio = 0;
  std::size_t pairs = 0;
};

Shift shiftedLeaf(const Context& x, int s) {
  const FabricSuspect& uplinks = x.paths.suspects[static_cast<std::size_t>(s)];
  if (uplinks.kind != FabricSuspect::Kind::kUplinks || uplinks.nodesBelow.size() < 2) return {};
  const int a0 = uplinks.nodesBelow[0];
  if (!sameLeaf(x.paths, a0, uplinks.nodesBelow[1])) return {};  // not a leaf: a pod's switch
  const std::vector<int>& leaf = x.paths.above[static_cast<std::size_t>(a0)].front();
  std::vector<double> own, others;
  std::set<std::vector<int>> otherLeaves;
  for (const auto& [at, values] : innerPairs(x.in, x.paths)) {
    std::vector<double>& into = at == leaf ? own : others;
    into.insert(into.end(), values.begin(), values.end());
    if (at != leaf) otherLeaves.insert(at);
  }
  if (own.size() < kShiftedPairs || otherLeaves.size() < 3) return {};
  std::vector<double> sorted = others;
  std::sort(sorted.begin(), sorted.end());
  const double lowTenth = sorted[sorted.size() / 10];
  const auto below = std::count_if(own.begin(), own.end(), [&](double v) { return v < lowTenth; });
  const double ratio = core::median(own) / core::median(others);
  if (!(ratio <= kShiftedInner && 4 * below >= 3 * static_cast<long>(own.size()))) return {};
  return {x.paths.switchSuspect[static_cast<std::size_t>(uplinks.device)], ratio, own.size()};
}

// The part to name for suspect `s`: its leaf where shiftedLeaf finds one, `note` then saying why.
int namedPart(const Context& x, int s, std::string& note) {
  const Shift shift = shiftedLeaf(x, s);
  if (shift.leaf < 0) return s;
  note = fmt::format("; its {} pairs among its nodes, which cross no uplink, run at {:.2f}x of the pairs inside other "
                     "leaves: the switch, not only its uplinks",
                     shift.pairs, shift.ratio);
  return shift.leaf;
}

// A measured directed node pair the fabric describes, and the suspects its path certainly crosses.
struct Cell {
  int a = 0;
  int b = 0;
  float value = 0;
  std::vector<int> crossed;
};

// Every such pair, once: the parts judged alone are each split over them.
std::vector<Cell> cellsOf(const InterNode& in, const FabricPaths& paths) {
  std::vector<Cell> cells;
  const std::vector<char> placed = placedOf(paths, in.view.n());
  in.m.nodeBw.forEachCell([&](int a, int b, float v) {
    if (a == b || a >= in.view.n() || b >= in.view.n() || !placed[static_cast<std::size_t>(a)] ||
        !placed[static_cast<std::size_t>(b)]) {
      return;
    }
    std::vector<int> crossed = paths.crossed(a, b);
    if (!crossed.empty()) cells.push_back({a, b, v, std::move(crossed)});
  });
  return cells;
}

// The pairs whose paths certainly cross suspect s, and the values of those that do not.
struct Split {
  std::vector<std::pair<int, int>> through;
  std::vector<float> throughValues;
  std::vector<float> rest;
};

Split splitBy(const std::vector<Cell>& cells, int s) {
  Split out;
  for (const Cell& c : cells) {
    if (std::find(c.crossed.begin(), c.crossed.end(), s) == c.crossed.end()) {
      out.rest.push_back(c.value);
    } else {
      out.through.emplace_back(c.a, c.b);
      out.throughValues.push_back(c.value);
    }
  }
  return out;
}

// Suspect s judged against the pairs that do not cross it (see the top of this file): its finding,
// or nothing when the evidence is not whole.
std::optional<Finding> aloneFinding(const Context& x, Split split, int s, const AnalysisConfig& c) {
  const FabricSuspect& suspect = x.paths.suspects[static_cast<std::size_t>(s)];
  if (suspect.nodesBelow.size() < 2) return std::nullopt;
  const bool anyExplained = std::any_of(split.through.begin(), split.through.end(),
                                        [&](const auto& p) { return x.in.isExplained(p.first, p.second); });
  if (anyExplained || split.through.size() < 2 || split.rest.size() <= split.through.size() ||
      static_cast<int>(split.rest.size()) < kAloneCells) {
    return std::nullopt;
  }
  const Groups groups = healthyGroup(split.rest, true);
  const float lowest = *std::min_element(groups.healthy.begin(), groups.healthy.end());
  if (!(*std::max_element(split.throughValues.begin(), split.throughValues.end()) < lowest)) return std::nullopt;
  const Robust r = robustStats(std::move(split.rest), true);
  core::Expected e = x.in.base;
  e.bandwidth = r.median;
  e.bandwidthSpread = r.spread;
  e.bandwidthGapBar = r.gapBar;
  // only a stricter bar than the fabric's can name what the fabric's bar did not
  if (!(bwBar(e, c) * e.bandwidth > bwBar(x.in.base, c) * x.in.base.bandwidth)) return std::nullopt;
  const JudgedMatrix view{x.in.m.nodeBw, x.in.m.nodeBwWorst, x.in.m.nodeCv, &judgeBw, Baseline{e, e}, c};
  const std::vector<PairCase> cases = casesOf(x.in, view, x.paths, x.suspects);
  const Tally tally = tallyOf(cases, x.suspects.count(x.paths.nodes), {});
  const auto slowThrough = std::count_if(cases.begin(), cases.end(), [&](const PairCase& pc) {
    return crosses(pc, s) && pc.judged.verdict == Verdict::kSlow;
  });
  if (slowThrough != static_cast<long>(split.through.size())) return std::nullopt;  // a pair fine or noisy
  const Context alone{x.in, x.graph, x.paths, x.suspects, view, cases, tally, e, "of the pairs that do not cross it"};
  std::string note;
  const int named = namedPart(alone, s, note);
  return fabricFinding(alone, named, {}, note);
}

// Whether suspect s, with `through` of the cells (`sorted`, ascending) and the highest of them
// `highest`, could pass aloneFinding's test that every pair through it is below every healthy
// pair that does not cross it: the healthy group of those keeps healthyGroupFloor of them at least,
// so its worst is no better than their that many-th best, which is no better than all the cells'.
// Exact, and cheap where sorting the rest for every part is quadratic in the nodes.
bool mayBeBelowTheRest(const std::vector<float>& sorted, std::size_t through, float highest) {
  if (through >= sorted.size()) return false;
  const std::size_t floor = healthyGroupFloor(sorted.size() - through);
  if (floor > sorted.size() - through) return true;  // no gap looked for: the group is all of them
  return highest < sorted[sorted.size() - floor];
}

// The parts the greedy cover left that are named judged alone, those through more pairs first; a
// part some of whose pairs an earlier one explains is not judged.
void judgeAlone(RuleContext& ctx, const Context& x, const std::vector<int>& chosen, std::vector<Finding>& findings) {
  const std::vector<Cell> cells = cellsOf(x.in, x.paths);
  std::vector<std::vector<std::size_t>> throughOf(static_cast<std::size_t>(x.suspects.fabric));
  std::vector<float> sorted;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    sorted.push_back(cells[i].value);
    for (int s : cells[i].crossed) {
      if (x.suspects.isFabric(s)) throughOf[static_cast<std::size_t>(s)].push_back(i);
    }
  }
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::pair<std::size_t, int>> order;  // (pairs through it, suspect)
  for (int s = 0; s < x.suspects.fabric; ++s) {
    if (std::find(chosen.begin(), chosen.end(), s) != chosen.end()) continue;
    order.emplace_back(throughOf[static_cast<std::size_t>(s)].size(), s);
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& p, const auto& q) { return p.first > q.first; });
  for (const auto& [count, s] : order) {
    float highest = -std::numeric_limits<float>::infinity();
    for (std::size_t i : throughOf[static_cast<std::size_t>(s)]) highest = std::max(highest, cells[i].value);
    if (count < 2 || !mayBeBelowTheRest(sorted, count, highest)) continue;
    Split split = splitBy(cells, s);
    const std::vector<std::pair<int, int>> through = split.through;
    std::optional<Finding> f = aloneFinding(x, std::move(split), s, ctx.c);
    if (!f) continue;
    for (const auto& [a, b] : through) ctx.inter.explainAbove(a, b);
    findings.push_back(std::move(*f));
  }
}

}  // namespace

void switchRule(RuleContext& ctx, std::vector<Finding>& findings) {
  const core::FabricGraph& graph = ctx.topo.fabric;
  if (graph.devices.empty()) return;
  const FabricPaths& paths = ctx.fabricPaths();
  if (paths.placed.size() < 3) return;  // two nodes: one pair, which no part of the path can be told from
  InterNode& in = ctx.inter;
  const Suspects suspects{static_cast<int>(paths.suspects.size())};
  const std::vector<PairCase> cases = casesOf(in, in.view, paths, suspects);
  std::vector<int> uplinksOf(paths.suspects.size(), -1);
  for (std::size_t s = 0; s < paths.suspects.size(); ++s) {
    const FabricSuspect& suspect = paths.suspects[s];
    if (suspect.kind == FabricSuspect::Kind::kSwitch) uplinksOf[s] = paths.uplinkSuspect[static_cast<std::size_t>(suspect.device)];
  }
  const Tally tally = tallyOf(cases, suspects.count(paths.nodes), std::move(uplinksOf));
  const Context x{in, graph, paths, suspects, in.view, cases, tally, in.base, "baseline"};
  const std::vector<int> picked = cover(cases, tally, ctx.c.attributeShare);
  for (int chosen : picked) {
    if (!suspects.isFabric(chosen)) continue;  // a node: the node rule names it
    std::string note;
    chosen = namedPart(x, chosen, note);
    const std::vector<int> ties = tiedWith(cases, tally, chosen, ctx.c.attributeShare);
    Finding f = fabricFinding(x, chosen, ties, note);
    if (std::any_of(ties.begin(), ties.end(), [&](int t) { return !suspects.isFabric(t); })) {
      f.severity = core::Severity::kInfo;  // as likely a node, which the node rule judges on its own
    } else {
      for (const PairCase& c : cases) {
        if (crosses(c, chosen) && tally.evidence(c, chosen)) in.explainAbove(c.x, c.y);
      }
    }
    findings.push_back(std::move(f));
  }
  judgeAlone(ctx, x, picked, findings);
}

}  // namespace fabricmap::orchestrator::internal
