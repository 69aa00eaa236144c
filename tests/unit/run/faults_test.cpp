// Faults without MPI: the watchdog's judgement of who holds up a step that overran, the findings
// that name hangs and corrupted data, the deadlines steps get, and the fault-injection and timeout
// options.
#include <gtest/gtest.h>

#include "core/error.h"
#include "core/hang.h"
#include "orchestrator/analysis/analysis.h"
#include "orchestrator/run/planner.h"
#include "orchestrator/run/run_config.h"
#include "topologies/rank_map.h"

namespace fabricmap::orchestrator {
namespace {

using core::RankProgress;
using core::StepPhase;

std::vector<RankProgress> allDone(int n, int step) {
  return std::vector<RankProgress>(static_cast<std::size_t>(n), RankProgress{step, StepPhase::kDone, 0.5});
}

TEST(JudgeHang, SilentRanksComeFirst) {
  std::vector<RankProgress> r = allDone(6, 4);
  r[1] = {4, StepPhase::kMeasuring, 0.4};
  r[2] = {4, StepPhase::kMeasuring, 9.0};  // stopped: no word for 9 s
  r[3] = {4, StepPhase::kStarting, 0.2};
  const core::HangVerdict v = core::judgeHang(4, r, 3.0);
  EXPECT_EQ(v.culprits, (std::vector<int>{2}));
  EXPECT_EQ(v.waiting, (std::vector<int>{1, 3}));
  EXPECT_EQ(v.why, "stopped responding");
}

TEST(JudgeHang, ThenRanksThatNeverReachedTheMeasurement) {
  std::vector<RankProgress> r = allDone(5, 7);
  r[0] = {7, StepPhase::kMeasuring, 0};
  r[1] = {7, StepPhase::kMeasuring, 0.1};
  r[3] = {7, StepPhase::kStarting, 0.3};  // stuck preparing
  r[4] = {6, StepPhase::kDone, 0.3};      // still in the step before
  const core::HangVerdict v = core::judgeHang(7, r, 3.0);
  EXPECT_EQ(v.culprits, (std::vector<int>{3, 4}));
  EXPECT_EQ(v.waiting, (std::vector<int>{0, 1}));
  EXPECT_EQ(v.why, "never reached the measurement");
}

TEST(JudgeHang, OtherwiseEveryoneStuckInsideTheMeasurement) {
  std::vector<RankProgress> r = allDone(4, 2);
  r[2] = {2, StepPhase::kMeasuring, 1.0};
  r[3] = {2, StepPhase::kMeasuring, 1.0};
  const core::HangVerdict v = core::judgeHang(2, r, 3.0);
  EXPECT_EQ(v.culprits, (std::vector<int>{2, 3}));
  EXPECT_TRUE(v.waiting.empty());
  EXPECT_EQ(v.why, "stuck inside the measurement");
  // a rank never heard from (step -1) at all is behind, and silent once long enough
  std::vector<RankProgress> unheard = allDone(3, 0);
  unheard[1] = RankProgress{};
  unheard[1].silentSeconds = 10;
  EXPECT_EQ(core::judgeHang(0, unheard, 3.0).culprits, (std::vector<int>{1}));
  // everyone done, yet the step did not end: nobody to blame by name, and it says so
  const core::HangVerdict gathering = core::judgeHang(3, allDone(3, 3), 3.0);
  EXPECT_TRUE(gathering.culprits.empty() && gathering.waiting.empty());
  EXPECT_NE(gathering.why.find("gathering"), std::string::npos);
}

TEST(JudgeHang, ARankSilentAfterFinishingItsPartHoldsUpTheGathering) {
  // frozen right after it said "done": everyone else finished too, yet it is the one to blame
  std::vector<RankProgress> r = allDone(4, 26);
  r[3].silentSeconds = 4.0;
  const core::HangVerdict v = core::judgeHang(26, r, 3.0);
  EXPECT_EQ(v.culprits, (std::vector<int>{3}));
  EXPECT_TRUE(v.waiting.empty());
  EXPECT_EQ(v.why, "stopped responding");
}

TEST(HangFinding, NamesRanksHostsAndWaiters) {
  std::vector<core::HostProbe> probes;
  for (int r = 0; r < 4; ++r) {
    core::HostProbe p{.hostname = std::string(r < 2 ? "gpu-a" : "gpu-b")};
    p.sharedLeader = r < 2 ? 0 : 2;
    probes.push_back(p);
  }
  const core::Topology t = topologies::buildTopology(probes, 0);
  const core::HangVerdict v{{3}, {0, 1, 2}, "stopped responding"};
  const core::Finding f = hangFinding(5, "world all_reduce float sum 1 MiB out-of-place", 12.4, 10, v, t);
  EXPECT_EQ(f.kind, core::FindingKind::kHang);
  EXPECT_EQ(f.severity, core::Severity::kError);
  EXPECT_EQ(f.subject, "rank 3 (gpu-b)");
  EXPECT_EQ(f.rank, 3);
  EXPECT_EQ(f.nodeA, 1);
  EXPECT_EQ(f.unit, "s");
  EXPECT_EQ(f.message,
            "step 5 (world all_reduce float sum 1 MiB out-of-place) hung: rank 3 (gpu-b) stopped responding; "
            "ranks 0-2 waited for it; ended after 12 s (deadline 10 s)");
  const core::Finding two = hangFinding(1, "", 3, 2, core::HangVerdict{{1, 2}, {}, "stuck"}, t);
  EXPECT_EQ(two.subject, "ranks 1-2 (gpu-a, gpu-b)");
  const core::Finding none = hangFinding(1, "", 3, 2, core::judgeHang(1, allDone(4, 1), 3.0), t);
  EXPECT_EQ(none.subject, "all ranks");
  EXPECT_EQ(none.rank, -1);
}

core::Topology twoHosts() {
  std::vector<core::HostProbe> probes;
  for (int r = 0; r < 4; ++r) {
    core::HostProbe p{.hostname = std::string(r < 2 ? "gpu-a" : "gpu-b")};
    p.sharedLeader = r < 2 ? 0 : 2;
    probes.push_back(p);
  }
  return topologies::buildTopology(probes, 0);
}

TEST(CorruptionFinding, NamesTheRanksTheLinkOrTheGpuPair) {
  const core::Topology t = twoHosts();
  core::CollectiveRecord row;
  row.op = "all_reduce";
  row.dtype = "float";
  row.bytes = 4096;
  row.scope = "world";
  row.group = 0;
  row.ranks = "0-3";
  row.wrong = 17;
  row.wrongRanks = "2-3";
  const core::Finding c = corruptionFinding(row, t);
  EXPECT_EQ(c.kind, core::FindingKind::kDataCorruption);
  EXPECT_EQ(c.severity, core::Severity::kError);
  EXPECT_EQ(c.subject, "ranks 2-3 (gpu-b)");
  EXPECT_EQ(c.rank, 2);
  EXPECT_EQ(c.nodeA, 1);
  EXPECT_EQ(c.measured, 17);
  EXPECT_NE(c.message.find("17 wrong elements on ranks 2-3 (gpu-b)"), std::string::npos) << c.message;

  core::PairRecord pair;
  pair.level = "rank";
  pair.a = 1;
  pair.b = 3;
  pair.wrong = 5;
  const core::Finding p = corruptionFinding(pair, t);
  EXPECT_EQ(p.subject, "rank 1 <-> rank 3 (gpu-a, gpu-b)");
  EXPECT_EQ(p.nodeA, 0);
  EXPECT_EQ(p.nodeB, 1);
  pair.level = "node";
  pair.a = 0;
  pair.b = 1;
  EXPECT_EQ(corruptionFinding(pair, t).subject, "gpu-a <-> gpu-b");

  core::CopyRecord copy;
  copy.node = 1;
  copy.rankA = 2;
  copy.rankB = 3;
  copy.gpuA = 0;
  copy.gpuB = 1;
  copy.method = "ce";
  copy.wrong = 9;
  const core::Finding g = corruptionFinding(copy, t);
  EXPECT_EQ(g.subject, "gpu-b GPU0-GPU1");
  EXPECT_EQ(g.nodeA, 1);
  EXPECT_NE(g.message.find("9 wrong elements in checked ce copies"), std::string::npos) << g.message;
}

TEST(StepDeadline, ExplicitOrFloorPlusDataAtTheSlowestRate) {
  RunConfig c = parseRunOptions({}).config;
  core::CollectiveStep small;
  small.bytes = 8;
  small.iters = 20;
  EXPECT_NEAR(stepDeadline(small, c), kDeadlineFloor, 1e-3);
  core::CollectiveStep big = small;
  big.bytes = 1ull << 30;
  EXPECT_GT(stepDeadline(big, c), kDeadlineFloor + 20.0 * (1ull << 30) / kSlowestRate);
  core::PairStep pairs;
  pairs.bytes = 256u << 20;
  pairs.window = 1;
  pairs.iters = 10;
  pairs.latencyIters = 1000;
  EXPECT_GT(stepDeadline(pairs, c), stepDeadline(core::PairStep{}, c));
  core::CopyStep copies;
  copies.bytes = 256u << 20;
  copies.iters = 10;
  EXPECT_GT(stepDeadline(copies, c), kDeadlineFloor + 10.0 * (256u << 20) / kSlowestRate);
  c.stepTimeout = 7.5;
  EXPECT_EQ(stepDeadline(big, c), 7.5);
  EXPECT_EQ(stepDeadline(copies, c), 7.5);
  EXPECT_EQ(stepDeadline(pairs, c), 7.5);
}

TEST(FaultOptions, StallAndCrashAndTimeout) {
  const core::Fault stall = parseFault("stall:rank=2:step=3");
  EXPECT_EQ(stall.kind, core::Fault::Kind::kStall);
  EXPECT_EQ(stall.rank, 2);
  EXPECT_EQ(stall.step, 3);
  EXPECT_EQ(parseFault("crash:rank=1").kind, core::Fault::Kind::kCrash);
  EXPECT_EQ(faultKindName(core::Fault::Kind::kCrash), "crash");
  EXPECT_THROW(parseFault("freeze:rank=1"), core::UsageError);
  EXPECT_EQ(parseRunOptions({"--step-timeout", "2.5"}).config.stepTimeout, 2.5);
  EXPECT_EQ(parseRunOptions({}).config.stepTimeout, 0.0);
  EXPECT_EQ(parseRunOptions({}).config.noiseCv, 0.2);
  EXPECT_EQ(parseRunOptions({"--noise-cv", "0.5"}).config.noiseCv, 0.5);
  EXPECT_THROW(parseRunOptions({"--noise-cv", "0"}), core::UsageError);
  for (const char* bad : {"0", "-3", "nan"}) {
    EXPECT_THROW(parseRunOptions({"--step-timeout", bad}), core::UsageError) << bad;
  }
}

}  // namespace
}  // namespace fabricmap::orchestrator
