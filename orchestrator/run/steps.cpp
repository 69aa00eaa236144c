// Running a plan's steps (see steps.h).
#include "orchestrator/run/steps.h"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <optional>
#include <set>
#include <type_traits>

#include <fmt/format.h>

#include "core/units.h"
#include "orchestrator/analysis/analysis.h"
#include "orchestrator/analysis/matrices.h"
#include "worker/comm.h"
#include "worker/mpi_check.h"

namespace fabricmap::orchestrator {
namespace {

// The rank's side of a run of the plan: the one loop over steps of every kind, and each kind's
// own preparation and follow-up of its rows (overloads; the templates are what a kind without
// its own gets). Rank 0 (`root`) records; every rank measures.
class PlanRun {
 public:
  PlanRun(const core::Topology& topology, core::Plan& plan, worker::Executor& executor, Steps& steps,
          std::vector<WrongResult>& wrong)
      : topology_(topology), plan_(plan), executor_(executor), steps_(steps), wrong_(wrong),
        root_(steps.resuming.root) {}

  void run() {
    // the list sizes are read as the loop goes: the pairwise retests append to plan_.pairSteps
    std::apply([&](auto&... lists) { (runKind(lists), ...); }, plan_.stepLists());
    if (builder_) analyze();
  }

 private:
  template <class S>
  void runKind(const std::vector<S>& list) {
    before(list);
    runSteps(list, 0);
    after(list);
  }

  template <class S>
  void runSteps(const std::vector<S>& list, std::size_t first) {
    for (std::size_t i = first; i < list.size(); ++i) {
      const S& step = list[i];
      auto result = steps_.run(step, executor_);
      if (!root_) continue;
      prepare(step, result);
      steps_.progress.clear();
      steps_.sinks.each([&](core::RecordSink& s) { s.step(result.step, result.rows); });
      for (const auto& row : result.rows) followUp(step, row);
    }
  }

  // Before a kind's first step and after its last (every rank).
  template <class S>
  void before(const std::vector<S>& /*list*/) {}
  template <class S>
  void after(const std::vector<S>& /*list*/) {}
  void before(const std::vector<core::TrainingStep>& list);
  void before(const std::vector<core::CopyStep>& list);
  void after(const std::vector<core::CollectiveStep>& list);
  void after(const std::vector<core::ScalingStep>& list);
  void after(const std::vector<core::PairStep>& list);

  // Rank 0, before the rows go to the sinks: rows whose iteration times vary beyond --noise-cv
  // are noisy, and so is their step.
  template <class S, class R>
  void prepare(const S& /*step*/, worker::Result<R>& result) {
    for (R& row : result.rows) {
      bool noisy = false;
      if constexpr (requires { row.timeUs.cv; }) noisy = row.timeUs.cv > steps_.config.noiseCv;
      if constexpr (requires { row.noisy; }) row.noisy = noisy;
      result.step.noisy = result.step.noisy || noisy;
    }
  }
  void prepare(const core::ScalingStep& step, worker::ScalingResult& result);
  void prepare(const core::TrainingStep& step, worker::TrainingResult& result);
  void prepare(const core::CopyStep& /*step*/, worker::CopyResult& /*result*/) {}
  void prepare(const core::PairStep& /*step*/, worker::PairResult& /*result*/) {}

  // Rank 0, after the rows went to the sinks: one row's wrong data, its matrix cells.
  template <class S, class R>
  void followUp(const S& /*step*/, const R& /*row*/) {}
  void followUp(const core::CollectiveStep& step, const core::CollectiveRecord& row);
  void followUp(const core::ScalingStep& step, const core::ScalingRecord& row);
  void followUp(const core::CopyStep& step, const core::CopyRecord& row);
  void followUp(const core::PairStep& step, const core::PairRecord& row);

  template <class R>
  void corrupted(const R& row, std::string what) {
    const core::Finding f = corruptionFinding(row, topology_);
    steps_.sinks.each([&](core::RecordSink& s) { s.finding(f); });
    wrong_.push_back({std::move(what)});
  }
  void finding(const core::Finding& f) {
    steps_.sinks.each([&](core::RecordSink& s) { s.finding(f); });
  }
  // Pairs per level (rank, node), sorted.
  using LevelPairs = std::array<std::vector<std::pair<int, int>>, 2>;
  // Rank 0: the pairs that look slow and were not measured again yet.
  LevelPairs newSuspects();
  // Rank 0: the pairs of `pass` that no longer look slow on the samples so far.
  LevelPairs cleared(const LevelPairs& pass);
  // Of `pairs`, those far below their baseline in `m` (farBelowPairs).
  static LevelPairs farBelow(const core::Matrices& m, const LevelPairs& pairs);
  // Rank 0's pairs, told to every rank.
  LevelPairs tell(const LevelPairs& pairs);
  // Measures rank 0's `pairs` again as retest number `sample`; false where there were none.
  // `far`: they all are far below their baseline (farBelowPairs), and each is measured alone (over
  // kIsolatedRetests of them: packed as on machines that may share one), so that no two share the
  // slow part they cross: two at a time read half its rate, and one cause would read as two.
  bool measureAgain(const std::vector<core::PairStep>& list, const LevelPairs& pairs, int sample, bool far);
  // The same, the pairs far below the baseline in rounds of their own.
  bool measureApart(const std::vector<core::PairStep>& list, const LevelPairs& pairs, int sample);
  void widen(const std::vector<core::PairStep>& list);
  void retest(const std::vector<core::PairStep>& list);
  // Runs the pair steps appended from `firstRetest` on (a resumed run takes those it measured).
  void runAppended(const std::vector<core::PairStep>& list, std::size_t firstRetest);
  void fixBaselinesFrom(const core::Matrices& m);
  void analyze();

  const core::Topology& topology_;
  core::Plan& plan_;
  worker::Executor& executor_;
  Steps& steps_;
  std::vector<WrongResult>& wrong_;
  const bool root_;
  std::vector<core::CollectiveRecord> inter_;    // rank 0: the inter scope's all_reduce rows
  std::vector<core::ScalingRecord> scaled_;      // rank 0: the scaling points so far
  std::vector<core::TrainingRecord> isolated_;   // rank 0: each traffic type alone
  std::optional<MatrixBuilder> builder_;         // rank 0, when copies or pairs are planned
  std::set<std::pair<int, int>> retested_[2];    // rank 0: the rank and node pairs measured again
  std::array<SettledLevels, 2> settled_;         // rank 0: per level, the retests' settled holders
};

void PlanRun::before(const std::vector<core::TrainingStep>& list) {
  if (!root_ || list.empty()) return;
  steps_.sinks.each([&](core::RecordSink& s) { s.layout(core::formatLayout(plan_.layout), layoutPlaces(plan_.layout)); });
  for (const core::Finding& f : layoutFindings(plan_.layout, topology_)) finding(f);
}

void PlanRun::before(const std::vector<core::CopyStep>& list) {
  // only rank 0 holds the matrices (R x R each)
  if (root_ && (!list.empty() || !plan_.pairSteps.empty())) builder_.emplace(topology_, matrixShapeOf(steps_.config));
}

void PlanRun::after(const std::vector<core::CollectiveStep>& /*list*/) {
  if (!root_ || !steps_.config.railsAtLineRate) return;
  for (const core::Finding& f : railLineRateFindings(inter_, topology_, analysisConfigOf(steps_.config))) finding(f);
}

void PlanRun::after(const std::vector<core::ScalingStep>& /*list*/) {
  if (!root_) return;
  for (const core::Finding& f : scalingFindings(scaled_, analysisConfigOf(steps_.config))) finding(f);
}

void PlanRun::after(const std::vector<core::PairStep>& list) {
  // the bar every pair is judged against: fixed from the first measurements (and the specs)
  if (builder_) fixBaselinesFrom(builder_->build());
  if (list.empty()) return;
  retest(list);
  // quick mode's second round goes around the pairs the retests left slow (on a healthy fabric,
  // few: the first rounds' collisions are cleared), and its own suspects are retested below
  if (steps_.config.pairwiseMode == PairwiseMode::kQuick) widen(list);
  if (steps_.config.retests <= 0) return;
  // a first round that ran slow everywhere must not leave the bar under a slow node: then the
  // pairs that only look slow against the raised bar are measured again too, once
  if (builder_ && builder_->retested()) {
    core::Matrices typical = builder_->buildTypical();
    fixBaselines(typical, topology_);
    core::Matrices fixed = builder_->baselines();
    if (raiseDepressedBaselines(fixed, typical)) builder_->fixExpected(fixed);
  }
  retest(list);  // only pairs not measured again before: the second quick round's, or any a raised baseline shows
}

void PlanRun::fixBaselinesFrom(const core::Matrices& m) {
  core::Matrices fixed = m;
  fixBaselines(fixed, topology_);
  builder_->fixExpected(fixed);
}

void PlanRun::prepare(const core::ScalingStep& /*step*/, worker::ScalingResult& result) {
  for (auto& row : result.rows) {
    row.noisy = row.timeUs.cv > steps_.config.noiseCv;
    fillEfficiency(row, scaled_);
    result.step.noisy = result.step.noisy || row.noisy;
  }
  scaled_.insert(scaled_.end(), result.rows.begin(), result.rows.end());
}

void PlanRun::prepare(const core::TrainingStep& step, worker::TrainingResult& result) {
  for (auto& row : result.rows) {
    row.noisy = row.timeUs.cv > steps_.config.noiseCv;
    result.step.noisy = result.step.noisy || row.noisy;
  }
  if (step.traffic < 0) {
    fillInterference(result.rows, isolated_);
  } else {
    isolated_.insert(isolated_.end(), result.rows.begin(), result.rows.end());
  }
}

void PlanRun::followUp(const core::CollectiveStep& step, const core::CollectiveRecord& row) {
  if (row.scope == "inter" && row.op == "all_reduce") inter_.push_back(row);
  if (row.wrong == 0) return;
  corrupted(row, fmt::format("{} {} {} {}{} in scope {} group {}: {} wrong elements on rank(s) {}", row.op, row.dtype,
                             core::formatBytes(step.bytes), row.inPlace ? "in-place" : "out-of-place",
                             row.redop == "none" ? "" : " (" + row.redop + ")", row.scope, row.group, row.wrong,
                             row.wrongRanks));
}

void PlanRun::followUp(const core::ScalingStep& /*step*/, const core::ScalingRecord& row) {
  if (row.wrong == 0) return;
  wrong_.push_back({fmt::format("scaling all_reduce on {} {} (step {}): {} wrong elements", row.n, row.level,
                                row.step, row.wrong)});
}

void PlanRun::followUp(const core::CopyStep& /*step*/, const core::CopyRecord& c) {
  builder_->add(c);
  if (c.wrong == 0) return;
  corrupted(c, fmt::format("{} copies between ranks {} and {} (node {}, step {}): {} wrong elements in checked "
                           "copies", c.method, c.rankA, c.rankB, c.node, c.step, c.wrong));
}

void PlanRun::followUp(const core::PairStep& /*step*/, const core::PairRecord& p) {
  builder_->add(p);
  if (p.wrong == 0) return;
  corrupted(p, fmt::format("pairwise {} pair {}-{} (step {}): {} wrong elements in a checked transfer", p.level, p.a,
                           p.b, p.step, p.wrong));
}

namespace {

// Whether every node is its own machine: no two share a kernel's boot id (emulated nodes do, and
// their ranks share its CPUs); nodes whose boot id is unknown count as their own.
bool separateMachines(const core::Topology& topology) {
  std::set<std::string> seen;
  for (const core::NodeRecord& n : topology.nodes) {
    if (!n.bootId.empty() && !seen.insert(n.bootId).second) return false;
  }
  return true;
}

// The pairs of a retest sample's full members, sorted.
std::vector<std::pair<int, int>> samplePairs(const RetestSample& sample) {
  std::vector<std::pair<int, int>> out;
  for (const auto& [member, pairs] : sample.samples) out.insert(out.end(), pairs.begin(), pairs.end());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

PlanRun::LevelPairs PlanRun::newSuspects() {
  LevelPairs out;
  const core::Matrices m = builder_->build();
  const AnalysisConfig c = analysisConfigOf(steps_.config);
  for (std::size_t level : {0u, 1u}) {
    for (const auto& pair : level == 0 ? suspectRankPairs(m, c) : suspectNodePairs(m, c)) {
      if (retested_[level].insert(pair).second) out[level].push_back(pair);
    }
  }
  return out;
}

PlanRun::LevelPairs PlanRun::cleared(const LevelPairs& pass) {
  LevelPairs out;
  const core::Matrices m = builder_->build();  // the typical figures of the samples so far
  const AnalysisConfig c = analysisConfigOf(steps_.config);
  for (std::size_t level : {0u, 1u}) {
    const auto slow = level == 0 ? suspectRankPairs(m, c) : suspectNodePairs(m, c);
    for (const auto& pair : pass[level]) {
      if (!std::binary_search(slow.begin(), slow.end(), pair)) out[level].push_back(pair);
    }
  }
  return out;
}

PlanRun::LevelPairs PlanRun::farBelow(const core::Matrices& m, const LevelPairs& pairs) {
  return {farBelowPairs(m, core::PairLevel::kRank, pairs[0]), farBelowPairs(m, core::PairLevel::kNode, pairs[1])};
}

PlanRun::LevelPairs PlanRun::tell(const LevelPairs& pairs) {
  // wire format: level (0 rank, 1 node), a, b per pair
  std::vector<int> wire;
  if (root_) {
    for (int level : {0, 1}) {
      for (const auto& [a, b] : pairs[static_cast<std::size_t>(level)]) wire.insert(wire.end(), {level, a, b});
    }
  }
  wire = worker::broadcastInts(MPI_COMM_WORLD, std::move(wire));
  LevelPairs out;
  for (std::size_t i = 0; i + 2 < wire.size(); i += 3) out[static_cast<std::size_t>(wire[i])].emplace_back(wire[i + 1], wire[i + 2]);
  return out;
}

void PlanRun::widen(const std::vector<core::PairStep>& list) {
  // Quick mode's second round: each node met a few peers, too few to tell a slow pair's cause (a
  // node, a link, a cable above a leaf: its shapes need several nodes of the leaf towards one
  // destination). Around each suspect pair, its ends' neighbours meet the other end.
  LevelPairs more;
  if (root_ && builder_) {
    const Charged planning(steps_.costs.planSeconds);
    const core::Matrices m = builder_->build();
    const AnalysisConfig c = analysisConfigOf(steps_.config);
    const std::array<std::vector<std::vector<int>>, 2> claims{steps_.claims.of(core::PairLevel::kRank, topology_),
                                                              steps_.claims.nodes};
    for (std::size_t level : {0u, 1u}) {
      const core::Matrix& bw = level == 0 ? m.rankUnidir : m.nodeBw;
      const auto measured = [&](int a, int b) { return std::isfinite(core::cellOr(bw, a, b)); };
      const int members = static_cast<int>(level == 0 ? topology_.ranks.size() : topology_.nodes.size());
      const auto suspects = level == 0 ? suspectRankPairs(m, c) : suspectNodePairs(m, c);
      const auto limit = static_cast<std::size_t>(members) * static_cast<std::size_t>(steps_.config.pairwisePeers);
      more[level] = widenedPairs(suspects, claims[level], members, kWidenPerSide, limit, measured);
    }
  }
  const LevelPairs found = tell(more);
  if (found[0].empty() && found[1].empty()) return;
  const std::size_t first = list.size();
  {
    const Charged planning(steps_.costs.planSeconds);
    planWidening(steps_.config, topology_, core::PairLevel::kRank, found[0], steps_.claims, plan_);
    planWidening(steps_.config, topology_, core::PairLevel::kNode, found[1], steps_.claims, plan_);
  }
  runAppended(list, first);
}

void PlanRun::retest(const std::vector<core::PairStep>& list) {
  // Sample 1 measures every new suspect again, those far below the baseline a few per member and
  // per lane cable first (sampleRetests): the ones waiting are measured after them unless a
  // sample, this one's or an earlier retest's, settled them. Each later sample measures only the
  // pairs an earlier retest cleared: a retest as slow as the first figure settles the pair (the
  // typical figure is the better of two, or the middle of three, and a third sample could not
  // lift it), one fine retest against a slow first figure is a tie that the next sample breaks.
  const bool root = root_ && builder_;
  LevelPairs pass;
  std::array<RetestSample, 2> sampled;
  std::array<std::optional<core::LaneCables>, 2> cables;
  if (root) {
    const Charged planning(steps_.costs.planSeconds);
    const LevelPairs suspects = newSuspects();
    const core::Matrices m = builder_->build();
    const LevelPairs far = farBelow(m, suspects);
    const AnalysisConfig c = analysisConfigOf(steps_.config);
    for (std::size_t level : {0u, 1u}) {
      const auto pairLevel = level == 0 ? core::PairLevel::kRank : core::PairLevel::kNode;
      cables[level].emplace(steps_.claims.of(pairLevel, topology_), steps_.claims.lanesOf(pairLevel, topology_));
      sampled[level] = sampleRetests(suspects[level], steadyPairs(m, pairLevel, far[level], c), &*cables[level],
                                     settled_[level]);
      pass[level] = sampled[level].measured;
    }
  }
  for (int sample = 1; sample <= steps_.config.retests; ++sample) {
    LevelPairs now = sample == 1 ? pass : LevelPairs{};
    if (root && sample > 1) {
      const Charged planning(steps_.costs.planSeconds);
      now = cleared(pass);
    }
    const bool measured = measureApart(list, now, sample);
    if (sample > 1) {
      if (!measured) return;
      continue;
    }
    LevelPairs rest;
    if (root) {
      const Charged planning(steps_.costs.planSeconds);
      const core::Matrices m = builder_->build();
      const LevelPairs still = farBelow(m, {samplePairs(sampled[0]), samplePairs(sampled[1])});
      for (std::size_t level : {0u, 1u}) {
        const core::Matrix& bw = level == 0 ? m.rankUnidir : m.nodeBw;
        const auto depth = [&](int a, int b) {
          return std::fmin(core::cellOr(bw, a, b), core::cellOr(bw, b, a));  // NaN: the other way's
        };
        const SettledLevels found = settledLevels(sampled[level], still[level], depth);
        settled_[level].insert(found.begin(), found.end());
        rest[level] = unsettled(sampled[level], settled_[level], depth, &*cables[level]);
        pass[level].insert(pass[level].end(), rest[level].begin(), rest[level].end());
      }
    }
    if (!measureApart(list, rest, 1) && !measured) return;
  }
}

bool PlanRun::measureApart(const std::vector<core::PairStep>& list, const LevelPairs& pairs, int sample) {
  // A pair far below the baseline one way may still stream fast the other, where it congests the
  // cables that a suspect beside it crosses; and its retests may share a faulty leaf's uplinks
  // (core::packRounds' hot parts), which healthy suspects must not: two of them routed onto one
  // cable read a half, as slow in every sample. So the two kinds never share a round.
  LevelPairs far, rest;
  if (root_ && builder_) {
    far = farBelow(builder_->build(), pairs);
    for (std::size_t level : {0u, 1u}) {
      const std::set<std::pair<int, int>> apart(far[level].begin(), far[level].end());
      std::copy_if(pairs[level].begin(), pairs[level].end(), std::back_inserter(rest[level]),
                   [&](const auto& pair) { return apart.count(pair) == 0; });
    }
  }
  const bool farMeasured = measureAgain(list, far, sample, true);
  return measureAgain(list, rest, sample, false) || farMeasured;
}

bool PlanRun::measureAgain(const std::vector<core::PairStep>& list, const LevelPairs& pairs, int sample,
                           bool far) {
  const LevelPairs found = tell(pairs);
  if (found[0].empty() && found[1].empty()) return false;
  const std::size_t firstRetest = list.size();
  {
    const Charged planning(steps_.costs.planSeconds);
    const int ranks = static_cast<int>(topology_.ranks.size());
    const int nodes = static_cast<int>(topology_.nodes.size());
    // rank pairs share their nodes' CPUs and memory with the node's other pairs: apart only at
    // one rank per node
    const bool apart = !far && separateMachines(topology_);
    planRetests(steps_.config, core::PairLevel::kRank, ranks, found[0], plan_, sample,
                steps_.claims.of(core::PairLevel::kRank, topology_), apart && ranks == nodes);
    planRetests(steps_.config, core::PairLevel::kNode, nodes, found[1], plan_, sample, steps_.claims.nodes, apart);
  }
  runAppended(list, firstRetest);
  return true;
}

void PlanRun::runAppended(const std::vector<core::PairStep>& list, std::size_t firstRetest) {
  Resuming& resuming = steps_.resuming;
  if (!resuming.recorded.empty()) {
    // a step the stopped run measured is taken from the file when it measures the same pairs
    const int from = list[firstRetest].index;
    std::vector<char> more;
    if (root_) more = resuming.replay.match(plan_, from, false);
    worker::broadcastBytes(MPI_COMM_WORLD, more);
    resuming.recorded.resize(static_cast<std::size_t>(from), 0);
    resuming.recorded.insert(resuming.recorded.end(), more.begin(), more.end());
  }
  steps_.progress.extend(plan_);
  steps_.sinks.each([&](core::RecordSink& s) { s.planExtended(plan_.stepCount()); });
  runSteps(list, firstRetest);
}

void PlanRun::analyze() {
  std::optional<Charged> analysing(steps_.costs.analysisSeconds);
  const core::Matrices result = builder_->build();
  const std::vector<core::Finding> findings = orchestrator::analyze(result, topology_, analysisConfigOf(steps_.config));
  analysing.reset();
  steps_.progress.clear();
  steps_.sinks.each([&](core::RecordSink& s) { s.analysis(result, findings); });
}

}  // namespace

void runPlan(const core::Topology& topology, core::Plan& plan, worker::Executor& executor, Steps& steps,
             std::vector<WrongResult>& wrong) {
  PlanRun(topology, plan, executor, steps, wrong).run();
}

}  // namespace fabricmap::orchestrator
