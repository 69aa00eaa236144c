// How the analysis judges a measured cell (see judging.h).
#include "orchestrator/analysis/judging.h"

#include "core/stats.h"

namespace fabricmap::orchestrator::internal {

namespace {

std::size_t strideOf(std::size_t count) { return std::max<std::size_t>(1, count / 65536); }

}  // namespace

std::size_t healthyGroupFloor(std::size_t count) {
  const std::size_t looked = (count + strideOf(count) - 1) / strideOf(count);
  return std::max<std::size_t>(3, static_cast<std::size_t>(std::ceil(kHealthyShare * static_cast<double>(looked))));
}

Groups healthyGroup(std::vector<float> v, bool higherIsBetter) {
  const auto better = [&](float x, float y) { return higherIsBetter ? x > y : x < y; };
  std::vector<float> sorted;
  const std::size_t stride = strideOf(v.size());
  for (std::size_t i = 0; i < v.size(); i += stride) sorted.push_back(v[i]);
  std::sort(sorted.begin(), sorted.end(), [&](float x, float y) { return better(y, x); });  // worst first
  const std::size_t minHealthy = healthyGroupFloor(v.size());
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

double outsideVariation(double value, const Robust& population, bool higherIsBetter) {
  const double sigma = population.spread * population.median;
  if (!(sigma > 0)) return 1.0;
  const double z = (higherIsBetter ? population.median - value : value - population.median) / sigma;
  return std::clamp((z - 1.0) / 2.0, 0.0, 1.0);
}

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

int samplesOf(float cv, const AnalysisConfig& c) { return cv == 0.0f ? 1 + c.retests : 1; }

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

void setConfidence(Finding& f, const Evidence& e, double margin, bool byShare) {
  const double weight = e.samples / (e.samples + 1.0);
  const double support = (byShare ? e.share() : 1.0) * weight;
  const double clarity = e.clarity.empty() ? 0.0 : core::median(e.clarity);
  f.confidence = std::clamp(support * clarity * margin, 0.0, 1.0);
  f.message += fmt::format("; confidence {:.2f} ({} of {} pairs slow in {} samples, clarity {:.2f}, margin {:.2f})",
                           f.confidence, e.slow, e.judged, e.samples, clarity, margin);
}

core::Severity severityFor(double ratio) { return ratio < 0.5 ? core::Severity::kError : core::Severity::kWarning; }

core::Severity latencySeverity(double ratio, double factor) {
  return ratio > 2 * factor ? core::Severity::kError : core::Severity::kWarning;
}

std::string nodeName(const core::Topology& t, int node) {
  return t.nodes[static_cast<std::size_t>(node)].name;
}

std::string nodesText(const core::Topology& t, const std::vector<int>& nodes, std::size_t shown) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < std::min(shown, nodes.size()); ++i) names.push_back(nodeName(t, nodes[i]));
  return fmt::format("{}{}", fmt::join(names, ", "), nodes.size() > shown ? fmt::format(" and {} more", nodes.size() - shown) : "");
}

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

Evidence directionOf(const JudgedMatrix& v, int x, bool outgoing) {
  Evidence e;
  forEachPeer(v.values, x, [&](int y) {
    const int from = outgoing ? x : y;
    const int to = outgoing ? y : x;
    e.add(v.at(from, to), v.values.at(from, to));
  });
  return e;
}

double restIsClean(const JudgedMatrix& v, const Evidence& out, const Evidence& in) {
  const int judged = v.judged - out.judged - in.judged;
  const int slow = v.slow - out.slow - in.slow;
  return judged > 0 ? 1.0 - static_cast<double>(slow) / judged : 1.0;
}

std::vector<std::vector<int>> ranksByNode(const core::Topology& topo) {
  std::vector<std::vector<int>> out(topo.nodes.size());
  for (const auto& r : topo.ranks) {
    if (r.node >= 0 && r.node < static_cast<int>(out.size())) out[static_cast<std::size_t>(r.node)].push_back(r.rank);
  }
  return out;
}

}  // namespace fabricmap::orchestrator::internal
