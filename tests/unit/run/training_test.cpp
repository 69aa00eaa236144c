// The training pattern and the scaling sweep: plans (traffic types, sizes, groups, step order),
// their options, the derived figures (interference, efficiency), their findings, and their
// records through the HDF5 file and the journal.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "orchestrator/analysis/analysis.h"
#include "orchestrator/run/planner.h"
#include "orchestrator/run/run_config.h"
#include "results/h5_reader.h"
#include "results/h5_writer.h"
#include "results/journal.h"
#include "topologies/rank_map.h"

namespace fabricmap::orchestrator {
namespace {

using Groups = std::vector<std::vector<int>>;

// Nodes of `sizes[i]` ranks each (as emulated blocks would be, but uneven where asked).
core::Topology nodesOf(const std::vector<int>& sizes) {
  std::vector<core::HostProbe> probes;
  for (std::size_t n = 0; n < sizes.size(); ++n) {
    for (int r = 0; r < sizes[n]; ++r) {
      core::HostProbe p;
      p.hostname = "host" + std::to_string(n);
      p.memAvailableBytes = 64ull << 30;
      p.sharedLeader = static_cast<int>(probes.size()) - r;
      probes.push_back(p);
    }
  }
  return topologies::buildTopology(probes, 0);
}

RunConfig trainingConfig(const std::vector<std::string>& extra) {
  std::vector<std::string> args{"--patterns", "training", "--seq-len", "256", "--hidden", "512"};
  args.insert(args.end(), extra.begin(), extra.end());
  return parseRunOptions(args).config;
}

const core::Traffic* trafficOf(const core::Plan& plan, core::Parallelism kind) {
  for (const auto& t : plan.traffic) {
    if (t.kind == kind) return &t;
  }
  return nullptr;
}

TEST(TrainingPlan, ThreeDimensionsOnTwoNodes) {
  const core::Plan plan = makePlan(trainingConfig({"--layout", "tp=2,pp=2,dp=2"}), nodesOf({4, 4}));
  EXPECT_TRUE(plan.collectiveSteps.empty());
  EXPECT_TRUE(plan.pairSteps.empty());
  ASSERT_EQ(plan.traffic.size(), 3u);  // no expert parallelism
  // activations: b x s x h x 2 B (bfloat16) = 1 x 256 x 512 x 2
  const std::uint64_t activation = 262144;
  const core::Traffic* tp = trafficOf(plan, core::Parallelism::kTensor);
  ASSERT_NE(tp, nullptr);
  EXPECT_EQ(tp->ops, std::vector<core::Op>{core::Op::kAllReduce});
  EXPECT_EQ(tp->bytes, activation);
  EXPECT_EQ(tp->messages, 8);  // 4 per layer, 2 layers
  EXPECT_EQ(tp->groups, (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  const core::Traffic* pp = trafficOf(plan, core::Parallelism::kPipeline);
  ASSERT_NE(pp, nullptr);
  EXPECT_EQ(pp->ops, std::vector<core::Op>{core::Op::kSendRecv});
  EXPECT_EQ(pp->messages, 2);  // forward and back
  EXPECT_EQ(pp->groups, (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));  // stage order
  const core::Traffic* dp = trafficOf(plan, core::Parallelism::kData);
  ASSERT_NE(dp, nullptr);
  // gradients: 12 h^2 x 2 layers x 2 B / tp 2 = 12 x 262144 x 2 = 6 MiB, one 25 MiB bucket
  EXPECT_EQ(dp->bytes, 6291456u);
  EXPECT_EQ(dp->messages, 1);
  EXPECT_EQ(dp->groups, (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));  // across the nodes
  // each type alone, then all at once, indices in order
  ASSERT_EQ(plan.trainingSteps.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(plan.trainingSteps[static_cast<std::size_t>(i)].index, i);
    EXPECT_EQ(plan.trainingSteps[static_cast<std::size_t>(i)].traffic, i < 3 ? i : -1);
  }
  EXPECT_EQ(plan.trainingSteps[3].bytes, 8 * activation + 2 * activation + 6291456u);
  EXPECT_EQ(plan.stepCount(), 4);
}

TEST(TrainingPlan, BucketsSequenceParallelZeroAndExperts) {
  // tp=1: the whole 12 MiB of gradients per rank in 4 MiB buckets
  const core::Plan zero = makePlan(
      trainingConfig({"--layout", "tp=1,dp=8,ep=4", "--dp-mode", "zero", "--bucket-bytes", "4M", "--top-k", "2"}),
      nodesOf({4, 4}));
  const core::Traffic* dp = trafficOf(zero, core::Parallelism::kData);
  ASSERT_NE(dp, nullptr);
  EXPECT_EQ(dp->ops, (std::vector<core::Op>{core::Op::kReduceScatter, core::Op::kAllGather}));
  EXPECT_EQ(dp->messages, 3);
  EXPECT_EQ(dp->bytes, 4u << 20);
  const core::Traffic* ep = trafficOf(zero, core::Parallelism::kExpert);
  ASSERT_NE(ep, nullptr);
  EXPECT_EQ(ep->ops, std::vector<core::Op>{core::Op::kAllToAll});
  EXPECT_EQ(ep->bytes, 2u * 262144);  // top-2
  EXPECT_EQ(ep->messages, 8);
  EXPECT_EQ(ep->groups, (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(trafficOf(zero, core::Parallelism::kTensor), nullptr);

  const core::Plan sp = makePlan(trainingConfig({"--layout", "tp=4,dp=2", "--sequence-parallel"}), nodesOf({4, 4}));
  ASSERT_EQ(sp.traffic.size(), 2u);
  EXPECT_EQ(sp.traffic[0].ops, (std::vector<core::Op>{core::Op::kAllGather, core::Op::kReduceScatter}));
  EXPECT_EQ(sp.trainingSteps.size(), 3u);
}

TEST(TrainingPlan, DefaultLayoutAndRefusals) {
  const core::Plan plan = makePlan(trainingConfig({}), nodesOf({4, 4}));
  EXPECT_EQ(core::formatLayout(plan.layout), "tp=4,pp=1,dp=2,ep=1");
  EXPECT_THROW(makePlan(trainingConfig({}), nodesOf({3, 2})), core::UsageError);  // uneven: say the layout
  EXPECT_THROW(makePlan(trainingConfig({"--layout", "tp=2,dp=2"}), nodesOf({4, 4})), core::UsageError);
  EXPECT_THROW(makePlan(trainingConfig({"--layout", "tp=1,dp=8,ep=3"}), nodesOf({4, 4})), core::UsageError);
  // TP across nodes: allowed with a warning, refused when strict
  const core::Topology two = nodesOf({4, 4});
  const core::Plan wide = makePlan(trainingConfig({"--layout", "tp=8"}), two);
  const auto findings = layoutFindings(wide.layout, two);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].kind, core::FindingKind::kLayout);
  EXPECT_EQ(findings[0].severity, core::Severity::kWarning);
  EXPECT_NE(findings[0].message.find("ranks 0-7"), std::string::npos) << findings[0].message;
  EXPECT_TRUE(layoutFindings(plan.layout, two).empty());
  EXPECT_THROW(makePlan(trainingConfig({"--layout", "tp=8", "--strict-layout"}), two), core::UsageError);
  // messages too small to split
  EXPECT_THROW(makePlan(trainingConfig({"--layout", "tp=8", "--sequence-parallel", "--seq-len", "1", "--hidden", "1"}), two),
               core::UsageError);
}

TEST(TrainingOptions, PatternsAndRefusals) {
  const RunConfig both = parseRunOptions({"--patterns", "training,pairwise"}).config;
  EXPECT_TRUE(both.training);
  EXPECT_TRUE(both.pairwise);
  EXPECT_FALSE(both.collectives);
  const RunConfig plain = parseRunOptions({}).config;
  EXPECT_FALSE(plain.training);
  EXPECT_FALSE(plain.scaling);
  EXPECT_TRUE(plain.collectives);
  const RunConfig scaling = parseRunOptions({"--scaling"}).config;
  EXPECT_TRUE(scaling.scaling);
  EXPECT_FALSE(scaling.collectives);  // a phase switch: only it runs
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--patterns", "trainng"}, {"--layout", "tp=2"}, {"--patterns", "training", "--layout", "tp=0"},
        {"--patterns", "training", "--dp-mode", "fsdp"}, {"--patterns", "training", "--hidden", "0"},
        {"--patterns", "training", "--train-dtype", "float7"}, {"--scaling", "--scaling-bytes", "8"}}) {
    EXPECT_THROW(parseRunOptions(bad), core::UsageError) << bad[0] << " " << bad[1];
  }
  // recorded for --resume: a training run differs from a plain one
  EXPECT_FALSE(measurementDifferences(trainingConfig({}), parseRunOptions({"--patterns", "training"}).config).empty());
}

TEST(ScalingPlan, GpusThenNodes) {
  RunConfig config = parseRunOptions({"--scaling"}).config;
  const core::Plan plan = makePlan(config, nodesOf({4, 4, 4}));
  ASSERT_EQ(plan.scalingSteps.size(), 5u);  // gpus 2, 4; nodes 1, 2, 3
  EXPECT_EQ(plan.scalingSteps[0].groups, (Groups{{0, 1}, {4, 5}, {8, 9}}));
  EXPECT_EQ(plan.scalingSteps[1].n, 4);
  EXPECT_EQ(plan.scalingSteps[2].level, core::ScalingLevel::kNodes);
  EXPECT_EQ(plan.scalingSteps[2].groups, (Groups{{0, 1, 2, 3}}));
  EXPECT_EQ(plan.scalingSteps[4].n, 3);
  EXPECT_EQ(plan.scalingSteps[4].groups.front().size(), 12u);
  // uneven nodes: a point runs on the nodes that have its n
  const core::Plan uneven = makePlan(config, nodesOf({3, 2}));
  ASSERT_GE(uneven.scalingSteps.size(), 2u);
  EXPECT_EQ(uneven.scalingSteps[0].groups, (Groups{{0, 1}, {3, 4}}));
  EXPECT_EQ(uneven.scalingSteps[1].groups, (Groups{{0, 1, 2}}));
  // one rank: nothing to scale
  EXPECT_THROW(makePlan(config, nodesOf({1})), core::UsageError);
}

core::ScalingRecord point(const char* level, int n, double busbw, bool noisy = false) {
  core::ScalingRecord r;
  r.level = level;
  r.n = n;
  r.busbw = busbw;
  r.noisy = noisy;
  return r;
}

TEST(ScalingAnalysis, EfficiencyAndFindings) {
  std::vector<core::ScalingRecord> rows;
  for (auto r : {point("gpus", 2, 100), point("gpus", 4, 90), point("gpus", 8, 30), point("nodes", 1, 80),
                 point("nodes", 2, 40)}) {
    fillEfficiency(r, rows);
    rows.push_back(r);
  }
  EXPECT_DOUBLE_EQ(rows[0].efficiency, 1.0);
  EXPECT_DOUBLE_EQ(rows[1].efficiency, 0.9);
  EXPECT_DOUBLE_EQ(rows[2].efficiency, 0.3);
  EXPECT_DOUBLE_EQ(rows[4].efficiency, 0.5);  // against 1 node, not against the GPUs
  // against the best at fewer GPUs: 4 beating 2 makes 4 the base of 8
  std::vector<core::ScalingRecord> rising;
  for (auto r : {point("gpus", 2, 80), point("gpus", 4, 100), point("gpus", 8, 90)}) {
    fillEfficiency(r, rising);
    rising.push_back(r);
  }
  EXPECT_DOUBLE_EQ(rising[1].efficiency, 1.25);
  EXPECT_DOUBLE_EQ(rising[2].efficiency, 0.9);
  EXPECT_EQ(scalingBase(rising[2], rising), &rising[1]);
  EXPECT_EQ(scalingBase(rising[0], rising), nullptr);
  const AnalysisConfig c;
  auto findings = scalingFindings(rows, c);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].kind, core::FindingKind::kScaling);
  EXPECT_EQ(findings[0].severity, core::Severity::kWarning);
  EXPECT_DOUBLE_EQ(findings[0].measured, 0.3);
  EXPECT_NE(findings[0].message.find("8 GPUs"), std::string::npos);
  // a noisy full node is not judged
  rows[2].noisy = true;
  findings = scalingFindings(rows, c);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].severity, core::Severity::kInfo);
  // a node that scales has no finding
  rows[2] = point("gpus", 8, 85);
  fillEfficiency(rows[2], rows);
  EXPECT_TRUE(scalingFindings(rows, c).empty());
}

TEST(TrainingAnalysis, InterferenceAgainstIsolated) {
  core::TrainingRecord tp;
  tp.mode = "isolated";
  tp.traffic = "tp";
  tp.timeUs.median = 100;
  core::TrainingRecord dp = tp;
  dp.traffic = "dp";
  dp.timeUs.median = 400;
  std::vector<core::TrainingRecord> concurrent{tp, dp, tp};
  for (auto& r : concurrent) r.mode = "concurrent";
  concurrent[0].timeUs.median = 250;
  concurrent[1].timeUs.median = 400;
  concurrent[2].traffic = "ep";
  fillInterference(concurrent, {tp, dp});
  EXPECT_DOUBLE_EQ(concurrent[0].interference, 2.5);
  EXPECT_DOUBLE_EQ(concurrent[1].interference, 1.0);
  EXPECT_TRUE(std::isnan(concurrent[2].interference));  // never measured alone
}

// Layout, training and scaling rows read back from the file and from the journal of a run that died.
TEST(TrainingRecords, FileAndJournalRoundTrip) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("fabricmap-training-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const core::Topology topology = nodesOf({2, 2});
  const core::Layout layout = core::parseLayout("tp=2,dp=2");
  core::TrainingRecord alone;
  alone.step = 0;
  alone.mode = "isolated";
  alone.traffic = "tp";
  alone.ops = "all_gather+reduce_scatter";
  alone.groups = 2;
  alone.nranks = 2;
  alone.bytes = 4096;
  alone.messages = 8;
  alone.timeUs.median = 12.5;
  alone.busbw = 3.25;
  core::TrainingRecord together = alone;
  together.step = 1;
  together.mode = "concurrent";
  together.interference = 1.75;
  together.noisy = true;
  core::ScalingRecord scale = point("gpus", 2, 7.5);
  scale.step = 2;
  scale.efficiency = 1.0;
  core::StepRecord step;
  step.kind = core::StepKind::kTraining;
  const auto feed = [&](core::RecordSink& sink) {
    core::Provenance p;
    p.plannedSteps = 3;
    sink.begin(p, topology, {});
    sink.layout(core::formatLayout(layout), layoutPlaces(layout));
    step.step = 0;
    sink.step(step, std::vector<core::TrainingRecord>{alone});
    step.step = 1;
    sink.step(step, std::vector<core::TrainingRecord>{together});
    step.step = 2;
    step.kind = core::StepKind::kScaling;
    sink.step(step, std::vector<core::ScalingRecord>{scale});
  };
  const std::string path = (dir / "t.h5").string();
  {
    results::H5Sink file(path);
    feed(file);
    file.finish(true);
  }
  const std::string died = (dir / "died.h5").string();
  {
    results::JournalSink journal(died);
    feed(journal);  // never finished: readers take the run from the journal
  }
  for (const std::string& p : {path, died}) {
    const results::ResultsFile f = results::readResults(p);
    EXPECT_EQ(f.layout, "tp=2,pp=1,dp=2,ep=1") << p;
    ASSERT_EQ(f.layoutPlaces.size(), 4u) << p;
    EXPECT_EQ(f.layoutPlaces[3].dpGroup, 1);
    EXPECT_EQ(f.layoutPlaces[3].tpIndex, 1);
    ASSERT_EQ(f.training.size(), 2u) << p;
    EXPECT_EQ(f.training[0].ops, "all_gather+reduce_scatter");
    EXPECT_TRUE(std::isnan(f.training[0].interference)) << p;
    EXPECT_DOUBLE_EQ(f.training[1].interference, 1.75);
    EXPECT_TRUE(f.training[1].noisy);
    EXPECT_EQ(f.training[1].messages, 8);
    ASSERT_EQ(f.scaling.size(), 1u) << p;
    EXPECT_DOUBLE_EQ(f.scaling[0].busbw, 7.5);
    EXPECT_EQ(f.scaling[0].level, "gpus");
    EXPECT_EQ(f.steps.size(), 3u);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace fabricmap::orchestrator
