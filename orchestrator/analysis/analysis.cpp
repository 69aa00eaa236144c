// Bottleneck analysis (see analysis.h).
//
// Inter-node attribution works on the node x node matrix (measured with all local ranks streaming
// at once, or derived from the rank matrix): a directed node pair is slow below the threshold.
// Then, for each node with 2+ measured peers:
//   - most of its outgoing and incoming pairs slow   -> "node"        (its NIC, cable or host)
//   - most outgoing slow, incoming fine              -> "node_egress"
//   - most incoming slow, outgoing fine              -> "node_ingress"
// Slow pairs left unexplained by those are "link" findings (one route between two nodes that are
// fine with everyone else). Inside nodes, slow rank pairs of the same-node class make an
// "intra_node" finding per node; ranks whose inter-node pairs are mostly slow on a node that is
// otherwise fine make a "rank" finding (that rank's NIC or rail). Latency is judged the same way.
#include "orchestrator/analysis/analysis.h"

#include <algorithm>
#include <array>
#include <optional>
#include <cmath>
#include <map>
#include <set>
#include <unordered_set>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/stats.h"
#include "core/units.h"
#include "topologies/specs.h"

namespace fabricmap::orchestrator {
namespace {

using core::Finding;
using core::LinkClass;

struct Robust {
  double median = std::nan("");
  double spread = 0;  // robust coefficient of variation
  double gapBar = 0;  // the middle of the gap setting faulty values apart, a share of the median (0: none)
};

// Calls take(row, col, value) for the finite cells of `m`: every one of a sparse matrix, at most
// ~1M of a dense one (a strided sample beyond that keeps an 8,192-rank analysis within memory and
// time).
template <class Take>
void sampleOf(const core::Matrix& m, Take take) {
  if (m.sparse) {
    m.forEachCell(take);
    return;
  }
  constexpr std::size_t kMaxSamples = 1u << 20;
  const std::size_t count = m.values.size();
  const std::size_t stride = std::max<std::size_t>(1, count / kMaxSamples);
  const auto n = static_cast<std::size_t>(std::max(m.n, 1));
  for (std::size_t i = 0; i < count; i += stride) {
    const float x = m.values[i];
    if (std::isfinite(x)) take(static_cast<int>(i / n), static_cast<int>(i % n), x);
  }
}

// Faults only ever make a link slower, and a fabric with faults measures in two groups: the
// healthy values and, more than kGap times worse, the faulty ones. When such a gap leaves at
// least kHealthyShare of the values on its better side, those are the healthy population, even
// where the faulty ones are the majority (two of seven nodes throttled slow 22 of 42 node pairs).
constexpr double kGap = 2.0;
constexpr double kHealthyShare = 0.25;

// The values better than the widest gap of at least kGap (see above), all of them when there is
// none, and the gap's bounds: the best value below it and the worst above it (0 when none). The
// gap is looked for in at most 64K of the values.
struct Groups {
  std::vector<float> healthy;
  double bestFaulty = 0;
  double worstHealthy = 0;
};
Groups healthyGroup(std::vector<float> v, bool higherIsBetter) {
  const auto better = [&](float x, float y) { return higherIsBetter ? x > y : x < y; };
  std::vector<float> sorted;
  const std::size_t stride = std::max<std::size_t>(1, v.size() / 65536);
  for (std::size_t i = 0; i < v.size(); i += stride) sorted.push_back(v[i]);
  std::sort(sorted.begin(), sorted.end(), [&](float x, float y) { return better(y, x); });  // worst first
  const auto minHealthy =
      std::max<std::size_t>(3, static_cast<std::size_t>(std::ceil(kHealthyShare * static_cast<double>(sorted.size()))));
  std::size_t split = 0;
  double widest = kGap;
  for (std::size_t i = 0; i + 1 < sorted.size() && sorted.size() - (i + 1) >= minHealthy; ++i) {
    if (!(sorted[i] > 0)) continue;
    const double gap = higherIsBetter ? sorted[i + 1] / sorted[i] : sorted[i] / sorted[i + 1];
    if (gap >= widest) {
      widest = gap;
      split = i + 1;
    }
  }
  if (split == 0) return {std::move(v), 0, 0};
  const float bestFaulty = sorted[split - 1];
  std::erase_if(v, [&](float x) { return !better(x, bestFaulty); });
  return {std::move(v), bestFaulty, sorted[split]};
}

// The baseline of a population (see analysis.h) and the spread of its healthy part.
Robust robustStats(std::vector<float> v, bool higherIsBetter) {
  Robust r;
  if (v.empty()) return r;
  // The median; of an even count, the middle value on the better side (the upper one for
  // bandwidth, the lower one for latency), so a class half of whose pairs are bad still centres
  // on a good one.
  const auto medianInPlace = [&](std::vector<float>& x) {
    const auto k = x.begin() + static_cast<long>(higherIsBetter ? x.size() / 2 : (x.size() - 1) / 2);
    std::nth_element(x.begin(), k, x.end());
    return static_cast<double>(*k);
  };
  Groups groups = healthyGroup(v, higherIsBetter);
  const bool gap = groups.healthy.size() < v.size();
  if (gap) v = std::move(groups.healthy);  // a gap set the faulty values aside
  // values more than 2x worse than the median are set aside (they are what the analysis looks for)
  const double all = medianInPlace(v);
  std::vector<float> kept = v;
  std::erase_if(kept, [&](float x) { return higherIsBetter ? x < 0.5 * all : x > 2.0 * all; });
  r.median = kept.empty() ? all : medianInPlace(kept);
  if (gap && higherIsBetter && r.median > 0) r.gapBar = std::sqrt(groups.bestFaulty * groups.worstHealthy) / r.median;
  // The spread is measured on every (healthy) value, around that baseline: pairs that are
  // consistently slower without a fault (shared cores, placement) widen it, so they do not pass
  // for faults. The median absolute deviation ignores up to half the values; of an even count,
  // the smaller middle value, so that a class half of whose pairs are slow does not hide them as
  // noise.
  if (v.size() >= 3 && r.median > 0) {
    for (float& x : v) x = static_cast<float>(std::fabs(x - r.median));
    const auto k = v.begin() + static_cast<long>((v.size() - 1) / 2);
    std::nth_element(v.begin(), k, v.end());
    r.spread = 1.4826 * static_cast<double>(*k) / r.median;
  }
  return r;
}

// How far `value` lies outside its population's own variation, as a margin: within one robust
// standard deviation of the median 0, three or more 1 (worse than the median: lower bandwidth,
// higher latency).
double outsideVariation(double value, const Robust& population, bool higherIsBetter) {
  const double sigma = population.spread * population.median;
  if (!(sigma > 0)) return 1.0;
  const double z = (higherIsBetter ? population.median - value : value - population.median) / sigma;
  return std::clamp((z - 1.0) / 2.0, 0.0, 1.0);
}

// The share of the baseline below which bandwidth is slow (core::Expected::bandwidthBar): on a
// quiet fabric (spread of a few %) the threshold; on a noisy one only gross slowdowns, or what a
// wide gap sets apart from the healthy values, are named.
double bwBar(const core::Expected& e, const AnalysisConfig& c) { return e.bandwidthBar(c.slowThreshold); }
double latencyBar(const core::Expected& e, const AnalysisConfig& c) {
  return std::max(c.latencyFactor, 1.0 + 3.0 * e.latencySpread);
}

bool slowBw(float v, const core::Expected& e, const AnalysisConfig& c) {
  return std::isfinite(v) && std::isfinite(e.bandwidth) && v < bwBar(e, c) * e.bandwidth;
}

bool badLatency(float v, const core::Expected& e, const AnalysisConfig& c) {
  return std::isfinite(v) && std::isfinite(e.latency) && e.latency > 0 && v > latencyBar(e, c) * e.latency;
}

// How a measured cell compares with its baseline.
enum class Verdict { kUnmeasured, kFine, kSlow, kNoisy };

// One directed cell judged: its verdict, how clearly it is slow (0..1; 0 unless slow) and how
// many samples stand behind that.
struct Judged {
  Verdict verdict = Verdict::kUnmeasured;
  double clarity = 0;
  int samples = 0;
};

// A slow pair whose best sample lies this share of the bar below it, or deeper, is clearly slow.
constexpr double kClearDepth = 0.1;

// The samples behind a cell: a retested cell (cv 0, see core::Matrices) has the first measurement
// and c.retests retests.
int samplesOf(float cv, const AnalysisConfig& c) { return cv == 0.0f ? 1 + c.retests : 1; }

// Slow: every sample below the bar (the best one is). Noisy: samples on both sides of it, or one
// sample whose iteration times varied beyond --noise-cv so much that its fastest iterations (about
// mean / (1 - 2 cv)) may have reached it. `cv`: the variation of a cell measured once (0 once
// retested, NaN unknown).
Judged judgeBw(float best, float worst, float cv, const core::Expected& base, const AnalysisConfig& c) {
  Judged j;
  if (!std::isfinite(best)) return j;
  j.samples = samplesOf(cv, c);
  const double bar = std::isfinite(base.bandwidth) ? bwBar(base, c) * base.bandwidth : std::nan("");
  if (!(best < bar)) {
    j.verdict = std::isfinite(worst) && worst < bar ? Verdict::kNoisy : Verdict::kFine;
    return j;
  }
  if (cv > c.noiseCv && !(best < bar * (1.0 - 2.0 * cv))) {
    j.verdict = Verdict::kNoisy;
    return j;
  }
  j.verdict = Verdict::kSlow;
  j.clarity = std::clamp((1.0 - best / bar) / kClearDepth, 0.0, 1.0);
  return j;
}

// The same for latency, where higher is worse: `best` is the lowest sample.
Judged judgeLatency(float best, float worst, float cv, const core::Expected& base, const AnalysisConfig& c) {
  Judged j;
  if (!std::isfinite(best)) return j;
  j.samples = samplesOf(cv, c);
  const double bar = std::isfinite(base.latency) && base.latency > 0 ? latencyBar(base, c) * base.latency : std::nan("");
  if (!(best > bar)) {
    j.verdict = std::isfinite(worst) && worst > bar ? Verdict::kNoisy : Verdict::kFine;
    return j;
  }
  j.verdict = Verdict::kSlow;
  j.clarity = std::clamp((1.0 - bar / best) / kClearDepth, 0.0, 1.0);
  return j;
}

// The cells behind one culprit (analysis.h: how they make its confidence).
struct Evidence {
  int judged = 0;  // cells judged: slow, fine or noisy
  int slow = 0;
  int samples = 0;              // samples behind the slow cells
  std::vector<double> clarity;  // of each slow cell
  std::vector<double> values;   // of each judged cell, for the finding's figure
  std::vector<double> slowValues;

  void add(const Judged& j, float value) {
    if (j.verdict == Verdict::kUnmeasured) return;
    ++judged;
    values.push_back(value);
    if (j.verdict != Verdict::kSlow) return;
    ++slow;
    samples += j.samples;
    clarity.push_back(j.clarity);
    slowValues.push_back(value);
  }
  void merge(const Evidence& o) {
    judged += o.judged;
    slow += o.slow;
    samples += o.samples;
    clarity.insert(clarity.end(), o.clarity.begin(), o.clarity.end());
    values.insert(values.end(), o.values.begin(), o.values.end());
    slowValues.insert(slowValues.end(), o.slowValues.begin(), o.slowValues.end());
  }
  double share() const { return judged > 0 ? static_cast<double>(slow) / judged : 0.0; }
};

// Fills f.confidence from the evidence and the margin over the next explanation, and says why in
// the message. `byShare`: support is the slow share of the judged cells (a node, a rank); a link
// or an intra-node path is the slow cells themselves.
void setConfidence(Finding& f, const Evidence& e, double margin, bool byShare) {
  const double weight = e.samples / (e.samples + 1.0);
  const double support = (byShare ? e.share() : 1.0) * weight;
  const double clarity = e.clarity.empty() ? 0.0 : core::median(e.clarity);
  f.confidence = std::clamp(support * clarity * margin, 0.0, 1.0);
  f.message += fmt::format("; confidence {:.2f} ({} of {} pairs slow in {} samples, clarity {:.2f}, margin {:.2f})",
                           f.confidence, e.slow, e.judged, e.samples, clarity, margin);
}

// Pairs left unjudged because their samples fell on both sides of the bar, reported once per level.
struct NoisyPairs {
  int count = 0;
  std::string example;
  void note(const std::string& what, float best, float worst, const char* unit) {
    ++count;
    if (example.empty()) {
      example = fmt::format("{}: {:.3g}..{:.3g} {}", what, std::min(best, worst), std::max(best, worst), unit);
    }
  }
};

std::string severityFor(double ratio) { return ratio < 0.5 ? "error" : "warning"; }

std::string latencySeverity(double ratio, double factor) {
  return ratio > 2 * factor ? "error" : "warning";
}

int severityRank(const std::string& s) { return s == "error" ? 0 : s == "warning" ? 1 : 2; }

std::string nodeName(const core::Topology& t, int node) {
  return t.nodes[static_cast<std::size_t>(node)].name;
}

// Calls f(y) for every y that x may have a measured pair with: every other row of a dense matrix,
// the cells of row x of a sparse one (both directions of a pair are kept together, see
// MatrixBuilder), so quick mode at 16,384 ranks costs its measured pairs, not n x n.
template <class F>
void forEachPeer(const core::Matrix& m, int x, F&& f) {
  if (!m.sparse) {
    for (int y = 0; y < m.n; ++y) {
      if (y != x) f(y);
    }
    return;
  }
  for (auto it = m.cells.lower_bound(m.index(x, 0)); it != m.cells.end() && it->first < m.index(x + 1, 0); ++it) {
    const int y = static_cast<int>(it->first - m.index(x, 0));
    if (y != x) f(y);
  }
}

using Judge = Judged (*)(float best, float worst, float cv, const core::Expected&, const AnalysisConfig&);

// What a cell is judged against. The baselines are fixed from every pair's first measurement;
// a retested cell's best of several samples is also judged against the gap its class shows once
// retested (the final best samples): on a noisy fabric the first samples overlap the faulty ones
// and show no gap, the retested healthy pairs and the faulty ones do.
struct Baseline {
  core::Expected fixed;
  core::Expected retested;
  const core::Expected& forCell(float cv) const { return cv == 0.0f ? retested : fixed; }
};

// `fixed`, with the gap the final best samples of `values` that `keep(row, col)` accepts show,
// when the baseline was fixed before the retests (`fixedEarly`).
template <class Keep>
Baseline baselineOf(const core::Expected& fixed, const core::Matrix& values, Keep keep, bool fixedEarly) {
  Baseline b{fixed, fixed};
  if (!fixedEarly || !(fixed.bandwidth > 0)) return b;
  std::vector<float> v;
  sampleOf(values, [&](int row, int col, float x) {
    if (keep(row, col)) v.push_back(x);
  });
  const Groups groups = healthyGroup(std::move(v), true);
  if (groups.bestFaulty > 0) {
    const double middle = std::sqrt(groups.bestFaulty * groups.worstHealthy) / fixed.bandwidth;
    b.retested.bandwidthGapBar = std::max(b.retested.bandwidthGapBar, middle);
  }
  return b;
}

// A node matrix (bandwidth or latency) judged cell by cell against its baseline, on demand (no
// n x n copy), with the totals the margins need.
struct JudgedMatrix {
  const core::Matrix& values;
  const core::Matrix& worst;
  const core::Matrix& cv;
  Judge judge;
  Baseline base;
  const AnalysisConfig& c;
  int judged = 0;  // over the whole matrix
  int slow = 0;

  int n() const { return values.n; }
  Judged at(int x, int y) const {
    const float variation = core::cellOr(cv, x, y);
    return judge(values.at(x, y), core::worstAt(worst, values, x, y), variation, base.forCell(variation), c);
  }
  bool isSlow(int x, int y) const { return at(x, y).verdict == Verdict::kSlow; }
};

// Judges `values` and counts its verdicts; disagreeing pairs are noted in `noisy`.
JudgedMatrix viewOf(const core::Matrix& values, const core::Matrix& worst, const core::Matrix& cv, Judge judge,
                    const Baseline& base, const AnalysisConfig& c, NoisyPairs& noisy, const core::Topology& topo) {
  JudgedMatrix v{values, worst, cv, judge, base, c};
  const bool latency = judge == &judgeLatency;
  values.forEachCell([&](int x, int y, float value) {
    if (x == y) return;
    const Judged j = v.at(x, y);
    ++v.judged;
    v.slow += j.verdict == Verdict::kSlow;
    if (j.verdict == Verdict::kNoisy && (!latency || x < y)) {
      noisy.note(nodeName(topo, x) + (latency ? " <-> " : " -> ") + nodeName(topo, y), value,
                 core::worstAt(worst, values, x, y), latency ? "us" : "GB/s");
    }
  });
  return v;
}

// The evidence of node x's outgoing (or incoming) pairs.
Evidence directionOf(const JudgedMatrix& v, int x, bool outgoing) {
  Evidence e;
  forEachPeer(v.values, x, [&](int y) {
    const int from = outgoing ? x : y;
    const int to = outgoing ? y : x;
    e.add(v.at(from, to), v.values.at(from, to));
  });
  return e;
}

// How clean the fabric is apart from node x: the fine share of the pairs that do not involve it.
double restIsClean(const JudgedMatrix& v, const Evidence& out, const Evidence& in) {
  const int judged = v.judged - out.judged - in.judged;
  const int slow = v.slow - out.slow - in.slow;
  return judged > 0 ? 1.0 - static_cast<double>(slow) / judged : 1.0;
}

}  // namespace

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

}  // namespace

namespace {

// "0-3,5" -> {0, 1, 2, 3, 5} (core::formatRanks' form); what does not parse is left out.
std::vector<int> ranksIn(const std::string& text) {
  std::vector<int> out;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string part = text.substr(at, comma - at);
    at = comma + 1;
    const std::size_t dash = part.find('-');
    try {
      const int first = std::stoi(part.substr(0, dash));
      const int last = dash == std::string::npos ? first : std::stoi(part.substr(dash + 1));
      for (int r = first; r <= last && r - first < 1 << 20; ++r) out.push_back(r);
    } catch (const std::exception&) {
    }
  }
  return out;
}

// "host-a, host-b": the distinct hosts of `ranks` (nodes by name where emulated).
std::string hostsOf(const std::vector<int>& ranks, const core::Topology& topology) {
  std::vector<std::string> hosts;
  for (int r : ranks) {
    if (r < 0 || r >= static_cast<int>(topology.ranks.size())) continue;
    const auto& rec = topology.ranks[static_cast<std::size_t>(r)];
    const std::string& name = topology.nodes.at(static_cast<std::size_t>(rec.node)).name;
    if (std::find(hosts.begin(), hosts.end(), name) == hosts.end()) hosts.push_back(name);
  }
  return fmt::format("{}", fmt::join(hosts, ", "));
}

Finding corruption(double wrong) {
  Finding f;
  f.severity = "error";
  f.kind = "data_corruption";
  f.measured = wrong;
  f.expected = 0;
  f.ratio = 0;
  f.unit = "elements";
  return f;
}

}  // namespace

core::Finding corruptionFinding(const core::CollectiveRecord& row, const core::Topology& topology) {
  Finding f = corruption(static_cast<double>(row.wrong));
  const std::vector<int> ranks = ranksIn(row.wrongRanks);
  if (!ranks.empty()) {
    f.rank = ranks.front();
    f.nodeA = topology.ranks.at(static_cast<std::size_t>(f.rank)).node;
  }
  f.subject = fmt::format("rank{} {} ({})", ranks.size() == 1 ? "" : "s", row.wrongRanks, hostsOf(ranks, topology));
  f.message = fmt::format(
      "{} {} {} B {} in scope {} group {} (ranks {}): {} wrong elements on {} - data corrupted in a transfer "
      "or on the device; check that rank's GPU (ECC), its links and NIC",
      row.op, row.dtype, row.bytes, row.inPlace ? "in-place" : "out-of-place", row.scope, row.group, row.ranks,
      row.wrong, f.subject);
  return f;
}

core::Finding corruptionFinding(const core::PairRecord& pair, const core::Topology& topology) {
  Finding f = corruption(static_cast<double>(pair.wrong));
  if (pair.level == "node") {
    f.nodeA = pair.a;
    f.nodeB = pair.b;
    f.subject = fmt::format("{} <-> {}", nodeName(topology, pair.a), nodeName(topology, pair.b));
  } else {
    f.rank = pair.a;
    f.nodeA = topology.ranks.at(static_cast<std::size_t>(pair.a)).node;
    f.nodeB = topology.ranks.at(static_cast<std::size_t>(pair.b)).node;
    f.subject = fmt::format("rank {} <-> rank {} ({})", pair.a, pair.b, hostsOf({pair.a, pair.b}, topology));
  }
  f.message = fmt::format("{}: {} wrong elements in checked transfers (step {}) - data corrupted on this link; "
                          "check its NICs, cables and switch ports",
                          f.subject, pair.wrong, pair.step);
  return f;
}

core::Finding corruptionFinding(const core::CopyRecord& copy, const core::Topology& topology) {
  Finding f = corruption(static_cast<double>(copy.wrong));
  f.rank = copy.rankA;
  f.nodeA = copy.node;
  const std::string node = nodeName(topology, copy.node);
  f.subject = copy.gpuA >= 0 && copy.gpuB >= 0 ? fmt::format("{} GPU{}-GPU{}", node, copy.gpuA, copy.gpuB)
                                               : fmt::format("{} ranks {}-{}", node, copy.rankA, copy.rankB);
  f.message = fmt::format("{}: {} wrong elements in checked {} copies (step {}) - data corrupted between these "
                          "GPUs; check their NVLink/PCIe path and memory (ECC)",
                          f.subject, copy.wrong, copy.method, copy.step);
  return f;
}

core::Finding hangFinding(int step, const std::string& what, double waitedSeconds, double deadlineSeconds,
                          const core::HangVerdict& verdict, const core::Topology& topology) {
  std::vector<std::string> hosts;
  for (int r : verdict.culprits) {
    const std::string& host = topology.ranks.at(static_cast<std::size_t>(r)).hostname;
    const std::string& node = topology.nodes.at(static_cast<std::size_t>(topology.ranks[static_cast<std::size_t>(r)].node)).name;
    const std::string where = node == host ? host : fmt::format("{} on {}", node, host);
    if (std::find(hosts.begin(), hosts.end(), where) == hosts.end()) hosts.push_back(where);
  }
  Finding f;
  f.severity = "error";
  f.kind = "hang";
  const std::string ranks = core::formatRanks(verdict.culprits);
  f.subject = verdict.culprits.empty()
                  ? std::string("all ranks")
                  : fmt::format("rank{} {} ({})", verdict.culprits.size() == 1 ? "" : "s", ranks, fmt::join(hosts, ", "));
  f.measured = waitedSeconds;
  f.expected = deadlineSeconds;
  f.ratio = deadlineSeconds > 0 ? waitedSeconds / deadlineSeconds : 0.0;
  f.unit = "s";
  if (!verdict.culprits.empty()) {
    f.rank = verdict.culprits.front();
    f.nodeA = topology.ranks.at(static_cast<std::size_t>(f.rank)).node;
  }
  f.message = fmt::format("step {}{} hung: {} {}{}; ended after {:.0f} s (deadline {:.0f} s)", step,
                          what.empty() ? "" : " (" + what + ")", f.subject, verdict.why,
                          verdict.waiting.empty() ? ""
                                                  : fmt::format("; rank{} {} waited for {}",
                                                                verdict.waiting.size() == 1 ? "" : "s",
                                                                core::formatRanks(verdict.waiting),
                                                                verdict.culprits.size() == 1 ? "it" : "them"),
                          waitedSeconds, deadlineSeconds);
  return f;
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
  std::map<std::string, std::vector<std::string>> byClass;  // class -> nodes
  for (const core::NodeRecord& node : topo.nodes) {
    const int g = node.gpuLinkCount();
    if (g >= 2) byClass[node.topologyClass].push_back(node.name);
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
        f.severity = "error";
        f.kind = "claimed_vs_measured";
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
        f.severity = "error";
        f.kind = "claimed_vs_measured";
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
  // 3. what the class means, once per class
  for (const auto& [cls, nodes] : byClass) {
    const std::string meaning = tensorParallelMeaning(cls);
    if (meaning.empty()) continue;
    Finding f;
    f.severity = cls == "NVLINK_DIRECT_MESH" ? "info" : "warning";
    f.kind = "topology";
    const std::vector<std::string> named(nodes.begin(), nodes.begin() + static_cast<long>(std::min<std::size_t>(nodes.size(), 3)));
    f.subject = nodes.size() == 1 ? nodes.front()
                                  : fmt::format("{} nodes ({}{})", nodes.size(), fmt::join(named, ", "),
                                                nodes.size() > named.size() ? ", ..." : "");
    f.measured = static_cast<double>(nodes.size());
    f.message = fmt::format("{} {} {}: {}", f.subject, nodes.size() == 1 ? "is" : "are", cls, meaning);
    findings.push_back(std::move(f));
  }
}

std::array<core::Expected, core::kLinkClasses> classBaselines(const core::Matrices& m) {
  std::array<core::Expected, core::kLinkClasses> out{};
  if (m.expectedFixed) return m.classExpected;
  out.fill({std::nan(""), std::nan(""), 0, 0, 0});
  if (m.rankLinkClass.n != m.rankUnidir.n) return out;
  // one pass per matrix, its cells sorted by class
  std::array<std::vector<float>, core::kLinkClasses> bw;
  std::array<std::vector<float>, core::kLinkClasses> lat;
  for (auto [matrix, byClass] : {std::pair{&m.rankUnidir, &bw}, std::pair{&m.rankLatency, &lat}}) {
    auto& sorted = *byClass;
    sampleOf(*matrix, [&](int a, int b, float v) { sorted[static_cast<std::size_t>(m.rankLinkClass.at(a, b))].push_back(v); });
  }
  for (std::size_t c = 1; c < core::kLinkClasses; ++c) {
    const Robust b = robustStats(std::move(bw[c]), true);
    const Robust l = robustStats(std::move(lat[c]), false);
    out[c] = {b.median, l.median, b.spread, l.spread, b.gapBar};
  }
  return out;
}

core::Expected classBaseline(const core::Matrices& m, LinkClass cls) {
  return classBaselines(m)[static_cast<std::size_t>(cls)];
}

core::Expected nodeBaseline(const core::Matrices& m) {
  if (m.expectedFixed) return m.nodeExpected;
  std::vector<float> bwCells;
  std::vector<float> latCells;
  sampleOf(m.nodeBw, [&](int x, int y, float v) { if (x != y) bwCells.push_back(v); });
  sampleOf(m.nodeLatency, [&](int x, int y, float v) { if (x != y) latCells.push_back(v); });
  const Robust bw = robustStats(std::move(bwCells), true);
  const Robust lat = robustStats(std::move(latCells), false);
  return {bw.median, lat.median, bw.spread, lat.spread, bw.gapBar};
}

void fixBaselines(core::Matrices& m, const core::Topology& topology) {
  m.expectedFixed = false;
  m.classExpected = classBaselines(m);
  for (auto& from : m.classExpectedFrom) from.clear();
  m.nodeExpected = nodeBaseline(m);
  // the GPU model every pair of a class uses, when there is exactly one
  std::array<std::optional<topologies::GpuSpec>, core::kLinkClasses> model{};
  std::array<bool, core::kLinkClasses> mixed{};
  std::map<std::string, std::optional<topologies::GpuSpec>> specOf;  // by GPU name
  const auto see = [&](LinkClass cls, int r) {
    const auto c = static_cast<std::size_t>(cls);
    const std::string& name = topology.ranks[static_cast<std::size_t>(r)].gpuName;
    auto it = specOf.find(name);
    if (it == specOf.end()) it = specOf.emplace(name, topologies::gpuSpecForName(name)).first;
    const auto& spec = it->second;
    if (!spec || (model[c] && model[c]->model != spec->model)) mixed[c] = true;
    if (!mixed[c]) model[c] = spec;
  };
  if (m.rankLinkClass.n == m.rankUnidir.n && m.rankUnidir.n == static_cast<int>(topology.ranks.size())) {
    std::vector<std::vector<int>> ranksOf(topology.nodes.size());
    for (const auto& r : topology.ranks) ranksOf.at(static_cast<std::size_t>(r.node)).push_back(r.rank);
    for (const auto& ranks : ranksOf) {
      for (int a : ranks) {
        for (int b : ranks) {
          if (a == b) continue;
          see(m.rankLinkClass.at(a, b), a);
          see(m.rankLinkClass.at(a, b), b);
        }
      }
    }
    if (ranksOf.size() >= 2) {
      for (const auto& r : topology.ranks) see(LinkClass::kInterNode, r.rank);
    }
  }
  const auto use = [&](LinkClass cls, double peak) {
    const auto c = static_cast<std::size_t>(cls);
    if (mixed[c] || !model[c] || !(peak > 0)) return;
    m.classExpected[c].bandwidth = kPracticalShare * peak;
    m.classExpectedFrom[c] = std::string(model[c]->model);
  };
  const auto nvswitch = static_cast<std::size_t>(LinkClass::kNvswitch);
  if (model[nvswitch]) use(LinkClass::kNvswitch, model[nvswitch]->nvlinkGBps);
  const auto pcie = static_cast<std::size_t>(LinkClass::kPcie);
  if (model[pcie]) use(LinkClass::kPcie, topologies::pcieX16GBps(model[pcie]->pcieGeneration).value_or(0.0));
  m.expectedFixed = true;
}

namespace {

// A first measurement worth measuring again: below the bar; below half the baseline, whatever
// the noise lowered the bar to (on a noisy fabric the faulty and the unlucky healthy pairs first
// overlap, their retests tell them apart); or below the baseline with iteration times so
// varied (beyond --noise-cv) that one sample cannot say.
bool looksSlow(float v, float cv, const core::Expected& e, const AnalysisConfig& c) {
  if (!std::isfinite(v) || !std::isfinite(e.bandwidth)) return false;
  return slowBw(v, e, c) || v < kSuspectShare * e.bandwidth || (cv > c.noiseCv && v < e.bandwidth);
}

}  // namespace

std::vector<std::pair<int, int>> suspectRankPairs(const core::Matrices& m, const AnalysisConfig& c) {
  const std::array<core::Expected, core::kLinkClasses> base = classBaselines(m);
  std::set<std::pair<int, int>> pairs;
  if (m.rankLinkClass.n != m.rankUnidir.n) return {};
  const auto baseOf = [&](int a, int b) -> const core::Expected& {
    return base[static_cast<std::size_t>(m.rankLinkClass.at(a, b))];
  };
  m.rankUnidir.forEachCell([&](int a, int b, float v) {
    if (a != b && looksSlow(v, core::cellOr(m.rankCv, a, b), baseOf(a, b), c)) pairs.emplace(std::min(a, b), std::max(a, b));
  });
  m.rankLatency.forEachCell([&](int a, int b, float v) {
    if (a != b && badLatency(v, baseOf(a, b), c)) pairs.emplace(std::min(a, b), std::max(a, b));
  });
  return {pairs.begin(), pairs.end()};
}

std::vector<std::pair<int, int>> suspectNodePairs(const core::Matrices& m, const AnalysisConfig& c) {
  std::set<std::pair<int, int>> pairs;
  if (!m.nodeMeasured) return {};
  const core::Expected bl = nodeBaseline(m);
  m.nodeBw.forEachCell([&](int x, int y, float v) {
    if (x != y && looksSlow(v, core::cellOr(m.nodeCv, x, y), bl, c)) pairs.emplace(std::min(x, y), std::max(x, y));
  });
  m.nodeLatency.forEachCell([&](int x, int y, float v) {
    if (x != y && badLatency(v, bl, c)) pairs.emplace(std::min(x, y), std::max(x, y));
  });
  return {pairs.begin(), pairs.end()};
}

namespace {

// What the inter-node rules share: the judged node matrix, which directed node pairs a finding
// already explains, and which nodes were named whole (their ranks are covered).
struct InterNode {
  const core::Matrices& m;
  const core::Topology& topo;
  const AnalysisConfig& c;
  core::Expected base;      // node pairs
  Baseline rankJudge;       // what an inter-node rank pair is judged against
  JudgedMatrix view;
  std::unordered_set<std::uint64_t> explained;  // directed node pairs, as index(x, y)
  std::vector<char> named;                      // per node
  // Ranks a slow node's pairs come from while its other ranks are fine: the rank rule names them
  // on the node's evidence (the node's pairs, which directions).
  struct SlowRank {
    int rank = -1;
    bool outgoing = false;
    bool incoming = false;
    Evidence node;  // the node's slow pairs in those directions
    double ratio = 0;  // its inter-node median over the best of its node's ranks
  };
  std::vector<SlowRank> slowRanks;

  bool isExplained(int x, int y) const { return explained.count(view.values.index(x, y)) > 0; }
  void explain(int x, bool outgoing, bool incoming) {
    forEachPeer(view.values, x, [&](int y) {
      if (outgoing) explained.insert(view.values.index(x, y));
      if (incoming) explained.insert(view.values.index(y, x));
    });
  }
  bool interNode(int a, int b) const { return m.rankLinkClass.at(a, b) == LinkClass::kInterNode; }
  Judged rankAt(int from, int to) const {
    return judgeBw(m.rankUnidir.at(from, to), core::worstAt(m.rankUnidirWorst, m.rankUnidir, from, to),
                   core::cellOr(m.rankCv, from, to), rankJudge.forCell(core::cellOr(m.rankCv, from, to)), c);
  }
};

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

std::vector<int> ranksOn(const core::Topology& topo, int node) {
  std::vector<int> out;
  for (const auto& r : topo.ranks) {
    if (r.node == node) out.push_back(r.rank);
  }
  return out;
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
    f.kind = "node";
    f.message = fmt::format("{}: {} of {} peers see it slow both ways, {} vs {} baseline ({:.2f}x) - check its NIC, "
                            "cable or host",
                            f.subject, std::max(n.out.slow, n.in.slow), n.out.judged, rate, base, f.ratio);
  } else if (n.outgoing) {
    f.kind = "node_egress";
    margin *= 1.0 - n.in.share();
    f.message = fmt::format("{} egress: sending to {} of {} peers at {} vs {} baseline ({:.2f}x) while receiving "
                            "normally - check its transmit path (NIC port, cable, egress shaping)",
                            f.subject, n.out.slow, n.out.judged, rate, base, f.ratio);
  } else {
    f.kind = "node_ingress";
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

// The unordered pairs {x < y} of a judged matrix with a slow direction that `keep` accepts.
template <class Keep>
std::set<std::pair<int, int>> slowPairs(const JudgedMatrix& v, Keep keep) {
  std::set<std::pair<int, int>> pairs;
  v.values.forEachCell([&](int a, int b, float) {
    if (a != b && keep(a, b) && v.isSlow(a, b)) pairs.emplace(std::min(a, b), std::max(a, b));
  });
  return pairs;
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
    f.kind = "link";
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
    f.kind = "rank";
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
    f.kind = "rank";
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
      f.kind = "node_latency";
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
    f.kind = "link_latency";
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
void intraNodeFindings(const core::Matrices& m, const core::Topology& topo, const AnalysisConfig& c,
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
    const std::vector<int> ranks = ranksOn(topo, static_cast<int>(node));
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
    f.kind = "intra_node";
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

// Verdicts the evidence does not carry become information, said so in their message.
void demoteUnsure(std::vector<Finding>& findings, const AnalysisConfig& c) {
  for (Finding& f : findings) {
    if (f.severity == "info" || !(f.confidence < c.minConfidence)) continue;
    f.severity = "info";
    f.message += fmt::format(" [below --min-confidence {:.2f}: information only]", c.minConfidence);
  }
}

}  // namespace

std::vector<Finding> analyze(const core::Matrices& m, const core::Topology& topo,
                             const AnalysisConfig& c) {
  std::vector<Finding> findings;
  const int nodes = m.nodeBw.n;
  const core::Expected nb = nodeBaseline(m);
  NoisyPairs noisyNodes;
  NoisyPairs noisyRanks;
  const std::array<core::Expected, core::kLinkClasses> classBase = classBaselines(m);

  const auto offDiagonal = [](int x, int y) { return x != y; };
  const Baseline nodeJudge = baselineOf(nb, m.nodeBw, offDiagonal, m.expectedFixed);
  const auto ofClass = [&](LinkClass cls) {
    const auto inClass = [&](int a, int b) { return m.rankLinkClass.n == m.rankUnidir.n && m.rankLinkClass.at(a, b) == cls; };
    return baselineOf(classBase[static_cast<std::size_t>(cls)], m.rankUnidir, inClass, m.expectedFixed);
  };
  InterNode in{m, topo, c, nb, ofClass(LinkClass::kInterNode),
               viewOf(m.nodeBw, m.nodeBwWorst, m.nodeCv, &judgeBw, nodeJudge, c, noisyNodes, topo), {},
               std::vector<char>(static_cast<std::size_t>(nodes), 0), {}};
  std::vector<NodeCulprit> culprits;
  for (int x = 0; x < nodes; ++x) {
    if (auto n = nodeCulprit(in, x)) culprits.push_back(std::move(*n));
  }
  const double rest = restIsClean(in);
  for (const NodeCulprit& n : culprits) findings.push_back(nodeFinding(in, n, rest));
  linkFindings(in, findings);
  latencyFindings(m, topo, c, nb, noisyNodes, findings);
  rankFindings(in, findings);
  slowRankFindings(in, findings);
  std::array<Baseline, core::kLinkClasses> classJudge{};
  for (std::size_t cls = 1; cls < core::kLinkClasses; ++cls) classJudge[cls] = ofClass(static_cast<LinkClass>(cls));
  intraNodeFindings(m, topo, c, classJudge, noisyRanks, findings);
  claimedVersusMeasured(m, topo, c, findings);
  demoteUnsure(findings, c);

  // Where healthy pairs differ so much that the bar moved, say so: a reader must know that only
  // gross slowdowns could be named.
  std::vector<std::pair<std::string, core::Expected>> classes{{"node-pair", nb}};
  for (std::size_t cls = 1; cls < core::kLinkClasses; ++cls) {
    classes.emplace_back(std::string(core::name(static_cast<LinkClass>(cls))) + " rank-pair", classBase[cls]);
  }
  for (const auto& [what, e] : classes) {
    if (!std::isfinite(e.bandwidth) || bwBar(e, c) >= c.slowThreshold) continue;
    // with one rank per node the node pairs are the inter-node rank pairs: say it once
    if (!m.nodeMeasured && what == "inter_node rank-pair") continue;
    Finding f;
    f.severity = "info";
    f.kind = "noise";
    f.subject = what;
    f.measured = e.bandwidthSpread;
    f.expected = e.bandwidth;
    f.ratio = bwBar(e, c);
    f.message = fmt::format(
        "healthy {} bandwidths differ by +-{:.0f}% (robust spread) around {}: pairs were judged "
        "slow only below {:.2f}x of it instead of {:.2f}x",
        what, 100 * e.bandwidthSpread, core::formatRate(e.bandwidth), bwBar(e, c), c.slowThreshold);
    findings.push_back(std::move(f));
  }

  // A host running more ranks than it has CPUs measures scheduling luck as much as its links:
  // findings that involve it become information, said once.
  std::map<std::string, std::pair<int, int>> hosts;  // hostname -> ranks on it, CPUs
  for (const auto& node : topo.nodes) {
    auto& [ranksOnHost, cpus] = hosts[node.hostname];
    ranksOnHost += node.ranks;
    cpus = node.cpus;
  }
  const auto oversubscribed = [&](int node) {
    if (node < 0) return false;
    const auto& [ranksOnHost, cpus] = hosts[topo.nodes[static_cast<std::size_t>(node)].hostname];
    return cpus > 0 && ranksOnHost > cpus;
  };
  bool downgraded = false;
  for (Finding& f : findings) {
    if (f.severity != "info" && (oversubscribed(f.nodeA) || oversubscribed(f.nodeB))) {
      f.severity = "info";
      f.message += " [not judged: oversubscribed host]";
      downgraded = true;
    }
  }
  for (const auto& [host, use] : hosts) {
    const auto& [ranksOnHost, cpus] = use;
    if (cpus <= 0 || ranksOnHost <= cpus) continue;
    Finding f;
    f.severity = "info";
    f.kind = "oversubscribed";
    f.subject = host;
    f.measured = ranksOnHost;
    f.expected = cpus;
    f.ratio = static_cast<double>(ranksOnHost) / cpus;
    f.unit = "ranks/CPUs";
    f.message = fmt::format(
        "{} runs {} ranks on {} CPUs: its figures depend on scheduling{}", host, ranksOnHost, cpus,
        downgraded ? ", so findings involving it are reported as information only" : "");
    findings.push_back(std::move(f));
  }

  for (const auto& [noisy, level] : {std::pair{&noisyNodes, "node"}, std::pair{&noisyRanks, "rank"}}) {
    if (noisy->count == 0) continue;
    Finding f;
    f.severity = "info";
    f.kind = "noisy";
    f.subject = fmt::format("{} {} pair(s)", noisy->count, level);
    f.message = fmt::format(
        "{} {} pair measurement(s) were noisy: some of their samples were below the bar and some above "
        "it, or, measured once, their iteration times varied beyond a CV of {:.2g} (e.g. {}); not judged: "
        "this fabric or host was too noisy to tell (retests may)",
        noisy->count, level, c.noiseCv, noisy->example);
    findings.push_back(std::move(f));
  }

  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    if (severityRank(a.severity) != severityRank(b.severity)) {
      return severityRank(a.severity) < severityRank(b.severity);
    }
    return a.ratio < b.ratio;
  });
  return findings;
}

}  // namespace fabricmap::orchestrator
