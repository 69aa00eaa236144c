// Running a plan's steps (see steps.h).
#include "orchestrator/run/steps.h"

#include <mpi.h>

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
  using PairList = std::vector<std::pair<int, int>>;
  // The pairs rank 0 found suspect and had not measured again yet, told to every rank: (rank
  // pairs, node pairs).
  std::pair<PairList, PairList> suspects();
  void retest(const std::vector<core::PairStep>& list);
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
  if (steps_.config.retests <= 0 || list.empty()) return;
  retest(list);
  // a first round that ran slow everywhere must not leave the bar under a slow node: then the
  // pairs that only look slow against the raised bar are measured again too, once
  if (builder_ && builder_->retested()) {
    core::Matrices typical = builder_->buildTypical();
    fixBaselines(typical, topology_);
    core::Matrices fixed = builder_->baselines();
    if (raiseDepressedBaselines(fixed, typical)) builder_->fixExpected(fixed);
  }
  retest(list);  // only pairs not measured again before: none unless a baseline rose
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

std::pair<PlanRun::PairList, PlanRun::PairList> PlanRun::suspects() {
  // wire format: level (0 rank, 1 node), a, b per suspect pair
  std::vector<int> wire;
  if (builder_) {
    const core::Matrices m = builder_->build();
    const AnalysisConfig c = analysisConfigOf(steps_.config);
    for (int level : {0, 1}) {
      for (const auto& pair : level == 0 ? suspectRankPairs(m, c) : suspectNodePairs(m, c)) {
        if (retested_[level].insert(pair).second) wire.insert(wire.end(), {level, pair.first, pair.second});
      }
    }
  }
  int count = static_cast<int>(wire.size());
  FM_MPI(MPI_Bcast(&count, 1, MPI_INT, 0, MPI_COMM_WORLD));
  wire.resize(static_cast<std::size_t>(count));
  FM_MPI(MPI_Bcast(wire.data(), count, MPI_INT, 0, MPI_COMM_WORLD));
  std::pair<PairList, PairList> out;
  for (std::size_t i = 0; i + 2 < wire.size(); i += 3) {
    (wire[i] == 0 ? out.first : out.second).emplace_back(wire[i + 1], wire[i + 2]);
  }
  return out;
}

void PlanRun::retest(const std::vector<core::PairStep>& list) {
  const auto [rankPairs, nodePairs] = suspects();
  const std::size_t firstRetest = list.size();
  planRetests(steps_.config, core::PairLevel::kRank, static_cast<int>(topology_.ranks.size()), rankPairs, plan_);
  planRetests(steps_.config, core::PairLevel::kNode, static_cast<int>(topology_.nodes.size()), nodePairs, plan_);
  if (list.size() == firstRetest) return;
  Resuming& resuming = steps_.resuming;
  if (!resuming.recorded.empty()) {
    // a retest the stopped run measured is taken from the file when it retests the same pairs
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
  const core::Matrices result = builder_->build();
  const std::vector<core::Finding> findings = orchestrator::analyze(result, topology_, analysisConfigOf(steps_.config));
  steps_.progress.clear();
  steps_.sinks.each([&](core::RecordSink& s) { s.analysis(result, findings); });
}

}  // namespace

void runPlan(const core::Topology& topology, core::Plan& plan, worker::Executor& executor, Steps& steps,
             std::vector<WrongResult>& wrong) {
  PlanRun(topology, plan, executor, steps, wrong).run();
}

}  // namespace fabricmap::orchestrator
