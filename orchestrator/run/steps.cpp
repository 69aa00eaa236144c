// Running a plan's steps (see steps.h).
#include "orchestrator/run/steps.h"

#include <mpi.h>

#include <optional>

#include <fmt/format.h>

#include "core/units.h"
#include "orchestrator/analysis/analysis.h"
#include "orchestrator/analysis/matrices.h"
#include "worker/comm.h"
#include "worker/mpi_check.h"

namespace fabricmap::orchestrator {

void runCollectiveSteps(const core::Plan& plan, worker::Executor& executor, Steps& steps,
                        std::vector<WrongResult>& wrong) {
  for (const core::CollectiveStep& step : plan.collectiveSteps) {
    worker::StepResult result = steps.run(step, executor);
    if (!steps.resuming.root) continue;
    for (const auto& row : result.rows) result.step.noisy = result.step.noisy || row.timeUs.cv > steps.config.noiseCv;
    steps.progress.clear();
    steps.sinks.each([&](core::RecordSink& s) { s.step(result.step, result.rows); });
    for (const auto& row : result.rows) {
      if (row.wrong == 0) continue;
      const core::Finding f = corruptionFinding(row, steps.topology);
      steps.sinks.each([&](core::RecordSink& s) { s.finding(f); });
      wrong.push_back({fmt::format("{} {} {} {}{} in scope {} group {}: {} wrong elements on rank(s) {}", row.op,
                                   row.dtype, core::formatBytes(step.bytes), row.inPlace ? "in-place" : "out-of-place",
                                   row.redop == "none" ? "" : " (" + row.redop + ")", row.scope, row.group, row.wrong,
                                   row.wrongRanks)});
    }
  }
}

namespace {

// Runs the pair steps from `first` on, feeding rank 0's sinks and matrix builder (null elsewhere).
void runPairSteps(std::size_t first, const core::Plan& plan, worker::Executor& executor, Steps& steps,
                  MatrixBuilder* builder, std::vector<WrongResult>& wrong) {
  for (std::size_t i = first; i < plan.pairSteps.size(); ++i) {
    const core::PairStep& step = plan.pairSteps[i];
    worker::PairResult result = steps.run(step, executor);
    if (builder == nullptr) continue;  // not rank 0
    steps.progress.clear();
    steps.sinks.each([&](core::RecordSink& s) { s.step(result.step, result.pairs); });
    for (const auto& p : result.pairs) {
      builder->add(p);
      if (p.wrong > 0) {
        const core::Finding f = corruptionFinding(p, steps.topology);
        steps.sinks.each([&](core::RecordSink& s) { s.finding(f); });
        wrong.push_back({fmt::format("pairwise {} pair {}-{} (step {}): {} wrong elements in a "
                                     "checked transfer", p.level, p.a, p.b, p.step, p.wrong)});
      }
    }
  }
}

// Runs the GPU-pair copy steps, feeding rank 0's sinks and matrix builder (null elsewhere).
void runCopySteps(const core::Plan& plan, worker::Executor& executor, Steps& steps, MatrixBuilder* builder,
                  std::vector<WrongResult>& wrong) {
  for (const core::CopyStep& step : plan.copySteps) {
    worker::CopyResult result = steps.run(step, executor);
    if (builder == nullptr) continue;  // not rank 0
    steps.progress.clear();
    steps.sinks.each([&](core::RecordSink& s) { s.step(result.step, result.copies); });
    for (const auto& c : result.copies) {
      builder->add(c);
      if (c.wrong > 0) {
        const core::Finding f = corruptionFinding(c, steps.topology);
        steps.sinks.each([&](core::RecordSink& s) { s.finding(f); });
        wrong.push_back({fmt::format("{} copies between ranks {} and {} (node {}, step {}): {} wrong "
                                     "elements in checked copies", c.method, c.rankA, c.rankB, c.node,
                                     c.step, c.wrong)});
      }
    }
  }
}

}  // namespace

void runScalingSteps(const core::Plan& plan, worker::Executor& executor, Steps& steps, std::vector<WrongResult>& wrong) {
  std::vector<core::ScalingRecord> done;  // rank 0
  const bool root = steps.resuming.root;
  for (const core::ScalingStep& step : plan.scalingSteps) {
    worker::ScalingResult result = steps.run(step, executor);
    if (!root) continue;
    for (auto& row : result.rows) {
      row.noisy = row.timeUs.cv > steps.config.noiseCv;
      fillEfficiency(row, done);
      result.step.noisy = result.step.noisy || row.noisy;
      if (row.wrong > 0) {
        wrong.push_back({fmt::format("scaling all_reduce on {} {} (step {}): {} wrong elements", row.n, row.level,
                                     row.step, row.wrong)});
      }
    }
    steps.progress.clear();
    steps.sinks.each([&](core::RecordSink& s) { s.step(result.step, result.rows); });
    done.insert(done.end(), result.rows.begin(), result.rows.end());
  }
  if (!root) return;
  for (const core::Finding& f : scalingFindings(done, analysisConfigOf(steps.config))) {
    steps.sinks.each([&](core::RecordSink& s) { s.finding(f); });
  }
}

void runTrainingSteps(const core::Plan& plan, worker::Executor& executor, Steps& steps) {
  const bool root = steps.resuming.root;
  if (root && !plan.trainingSteps.empty()) {
    steps.sinks.each([&](core::RecordSink& s) { s.layout(core::formatLayout(plan.layout), layoutPlaces(plan.layout)); });
    for (const core::Finding& f : layoutFindings(plan.layout, steps.topology)) {
      steps.sinks.each([&](core::RecordSink& s) { s.finding(f); });
    }
  }
  std::vector<core::TrainingRecord> isolated;  // rank 0
  for (const core::TrainingStep& step : plan.trainingSteps) {
    worker::TrainingResult result = steps.run(step, executor);
    if (!root) continue;
    for (auto& row : result.rows) {
      row.noisy = row.timeUs.cv > steps.config.noiseCv;
      result.step.noisy = result.step.noisy || row.noisy;
    }
    if (step.traffic < 0) {
      fillInterference(result.rows, isolated);
    } else {
      isolated.insert(isolated.end(), result.rows.begin(), result.rows.end());
    }
    steps.progress.clear();
    steps.sinks.each([&](core::RecordSink& s) { s.step(result.step, result.rows); });
  }
}

void runMatrices(const core::Topology& topology, core::Plan& plan, worker::Executor& executor, Steps& steps,
                 std::vector<WrongResult>& wrong) {
  const RunConfig& config = steps.config;
  int rank = 0;
  FM_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  const AnalysisConfig analysisConfig = analysisConfigOf(config);
  // only rank 0 holds the matrices (R x R each)
  std::optional<MatrixBuilder> builder;
  if (rank == 0) builder.emplace(topology, matrixShapeOf(config));
  MatrixBuilder* const matrices = builder ? &*builder : nullptr;
  runCopySteps(plan, executor, steps, matrices, wrong);
  runPairSteps(0, plan, executor, steps, matrices, wrong);
  // the bar every pair is judged against: fixed from the first measurements (and the specs)
  if (builder) {
    core::Matrices first = builder->build();
    fixBaselines(first, topology);
    builder->fixExpected(first);
  }

  if (config.retests > 0 && !plan.pairSteps.empty()) {
    // wire format: level (0 rank, 1 node), a, b per suspect pair
    std::vector<int> suspects;
    if (rank == 0) {
      const core::Matrices m = builder->build();
      for (const auto& [a, b] : suspectRankPairs(m, analysisConfig)) suspects.insert(suspects.end(), {0, a, b});
      for (const auto& [a, b] : suspectNodePairs(m, analysisConfig)) suspects.insert(suspects.end(), {1, a, b});
    }
    int count = static_cast<int>(suspects.size());
    FM_MPI(MPI_Bcast(&count, 1, MPI_INT, 0, MPI_COMM_WORLD));
    suspects.resize(static_cast<std::size_t>(count));
    FM_MPI(MPI_Bcast(suspects.data(), count, MPI_INT, 0, MPI_COMM_WORLD));
    std::vector<std::pair<int, int>> rankPairs;
    std::vector<std::pair<int, int>> nodePairs;
    for (std::size_t i = 0; i + 2 < suspects.size(); i += 3) {
      (suspects[i] == 0 ? rankPairs : nodePairs).emplace_back(suspects[i + 1], suspects[i + 2]);
    }
    const std::size_t firstRetest = plan.pairSteps.size();
    planRetests(config, core::PairLevel::kRank, static_cast<int>(topology.ranks.size()), rankPairs, plan);
    planRetests(config, core::PairLevel::kNode, static_cast<int>(topology.nodes.size()), nodePairs, plan);
    if (plan.pairSteps.size() > firstRetest) {
      if (!steps.resuming.recorded.empty()) {
        // a retest the stopped run measured is taken from the file when it retests the same pairs
        const int from = plan.pairSteps[firstRetest].index;
        std::vector<char> more;
        if (rank == 0) more = steps.resuming.replay.match(plan, from, false);
        worker::broadcastBytes(MPI_COMM_WORLD, more);
        steps.resuming.recorded.resize(static_cast<std::size_t>(from), 0);
        steps.resuming.recorded.insert(steps.resuming.recorded.end(), more.begin(), more.end());
      }
      steps.progress.extend(plan);
      steps.sinks.each([&](core::RecordSink& s) { s.planExtended(plan.stepCount()); });
      runPairSteps(firstRetest, plan, executor, steps, matrices, wrong);
    }
  }
  if (!builder) return;
  const core::Matrices result = builder->build();
  const std::vector<core::Finding> findings = analyze(result, topology, analysisConfig);
  steps.progress.clear();
  steps.sinks.each([&](core::RecordSink& s) { s.analysis(result, findings); });
}

}  // namespace fabricmap::orchestrator
