// How the analysis judges a measured cell (internal to orchestrator/analysis/): robust baselines
// and the gap that sets faulty values apart, slow versus noisy on the samples, the evidence behind
// a culprit and its confidence. Shared by the rules (rules.h); see analysis.h for the contract.
#pragma once

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/records.h"
#include "orchestrator/analysis/analysis.h"

namespace fabricmap::orchestrator::internal {

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
Groups healthyGroup(std::vector<float> v, bool higherIsBetter);
// How many of `count` values healthyGroup keeps healthy at least: of the values it looks at (a
// stride through them past 64K), kHealthyShare and 3 at least. So the healthy group's worst value
// is no better than the values' that many-th best.
std::size_t healthyGroupFloor(std::size_t count);

// The baseline of a population (see analysis.h) and the spread of its healthy part.
Robust robustStats(std::vector<float> v, bool higherIsBetter);

// How far `value` lies outside its population's own variation, as a margin: within one robust
// standard deviation of the median 0, three or more 1 (worse than the median: lower bandwidth,
// higher latency).
double outsideVariation(double value, const Robust& population, bool higherIsBetter);

// The share of the baseline below which bandwidth is slow (core::Expected::bandwidthBar): on a
// quiet fabric (spread of a few %) the threshold; on a noisy one only gross slowdowns, or what a
// wide gap sets apart from the healthy values, are named.
double bwBar(const core::Expected& e, const AnalysisConfig& c);
double latencyBar(const core::Expected& e, const AnalysisConfig& c);

bool slowBw(float v, const core::Expected& e, const AnalysisConfig& c);

bool badLatency(float v, const core::Expected& e, const AnalysisConfig& c);

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
int samplesOf(float cv, const AnalysisConfig& c);

// Slow: every sample below the bar (the best one is). Noisy: samples on both sides of it, or one
// sample whose iteration times varied beyond --noise-cv so much that its fastest iterations (about
// mean / (1 - 2 cv)) may have reached it. `cv`: the variation of a cell measured once (0 once
// retested, NaN unknown).
Judged judgeBw(float best, float worst, float cv, const core::Expected& base, const AnalysisConfig& c);

// The same for latency, where higher is worse: `best` is the lowest sample.
Judged judgeLatency(float best, float worst, float cv, const core::Expected& base, const AnalysisConfig& c);

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
void setConfidence(Finding& f, const Evidence& e, double margin, bool byShare);

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

core::Severity severityFor(double ratio);

core::Severity latencySeverity(double ratio, double factor);


std::string nodeName(const core::Topology& t, int node);
// The first `shown` of `nodes` by name, comma-separated, then " and N more" for the rest.
std::string nodesText(const core::Topology& t, const std::vector<int>& nodes, std::size_t shown);

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
                    const Baseline& base, const AnalysisConfig& c, NoisyPairs& noisy, const core::Topology& topo);

// The evidence of node x's outgoing (or incoming) pairs.
Evidence directionOf(const JudgedMatrix& v, int x, bool outgoing);

// How clean the fabric is apart from node x: the fine share of the pairs that do not involve it.
double restIsClean(const JudgedMatrix& v, const Evidence& out, const Evidence& in);

// Per node, its ranks in rank order: made once per analysis, since a scan of every rank per node
// is quadratic in the ranks.
std::vector<std::vector<int>> ranksByNode(const core::Topology& topo);


// The unordered pairs {x < y} of a judged matrix with a slow direction that `keep` accepts.
template <class Keep>
std::set<std::pair<int, int>> slowPairs(const JudgedMatrix& v, Keep keep) {
  std::set<std::pair<int, int>> pairs;
  v.values.forEachCell([&](int a, int b, float) {
    if (a != b && keep(a, b) && v.isSlow(a, b)) pairs.emplace(std::min(a, b), std::max(a, b));
  });
  return pairs;
}

}  // namespace fabricmap::orchestrator::internal
