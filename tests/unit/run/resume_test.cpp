// Resuming a stopped run: the configuration it takes, the layouts and plans it refuses, the steps
// it takes from the file, and file sinks that replace the stopped run only once published.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/error.h"
#include "orchestrator/run/planner.h"
#include "orchestrator/run/resume.h"
#include "results/h5_writer.h"
#include "results/journal.h"
#include "topologies/rank_map.h"

namespace fabricmap::orchestrator {
namespace {

namespace fs = std::filesystem;

ParsedRun parse(const std::vector<std::string>& args) { return parseRunOptions(args); }

const std::vector<std::string> kRecordedArgs = {"-b", "1K", "-e", "64K", "-n", "5", "--ops", "all_reduce",
                                                "--pairwise-mode", "quick", "-o", "old.h5",
                                                "--inject-fault", "stall:rank=2:step=6", "--step-timeout", "3"};

TEST(Resume, TakesTheRecordedConfigurationAndTheCommandsRunTimeSettings) {
  const ParsedRun given = parse({"--resume", "run.h5", "--progress", "lines"});
  EXPECT_EQ(given.resume, "run.h5");
  EXPECT_FALSE(given.measurementGiven);
  const RunConfig c = resumedConfig(given, {kRecordedArgs, "mpi"});
  EXPECT_EQ(c.output, "run.h5");  // the file being finished, wherever it was first written
  EXPECT_EQ(c.backend, "mpi");    // what "auto" resolved to then
  EXPECT_EQ(c.minBytes, 1024u);
  EXPECT_EQ(c.maxBytes, 65536u);
  EXPECT_EQ(c.iters, 5);
  EXPECT_EQ(c.pairwiseMode, PairwiseMode::kQuick);
  EXPECT_TRUE(c.faults.empty());  // the stall that stopped it is not injected again
  EXPECT_EQ(c.progress, ProgressMode::kLines);
  EXPECT_EQ(c.stepTimeout, 3.0);  // recorded, not given again
  EXPECT_EQ(resumedConfig(parse({"--resume", "run.h5", "--step-timeout", "9"}), {kRecordedArgs, "mpi"}).stepTimeout,
            9.0);
}

TEST(Resume, MeasurementOptionsMustMatchTheRecordedOnes) {
  // the same command with --resume added (a job script run again) is accepted
  std::vector<std::string> again = kRecordedArgs;
  again.insert(again.end(), {"--resume", "old.h5"});
  const ParsedRun same = parse(again);
  EXPECT_TRUE(same.measurementGiven);
  EXPECT_EQ(resumedConfig(same, {kRecordedArgs, "mpi"}).iters, 5);
  // another iteration count, or another op list, is refused naming what differs (the whole
  // command is compared: an option left out takes its default)
  std::vector<std::string> other = again;
  other[5] = "7";             // -n
  other[7] = "all_gather";    // --ops
  try {
    resumedConfig(parse(other), {kRecordedArgs, "mpi"});
    FAIL() << "a different configuration was accepted";
  } catch (const core::UsageError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("cannot resume 'old.h5'"), std::string::npos) << m;
    EXPECT_NE(m.find("iters: 5 vs 7"), std::string::npos) << m;
    EXPECT_NE(m.find("ops: [\"all_reduce\"] vs [\"all_gather\"]"), std::string::npos) << m;
    EXPECT_EQ(m.find("max_bytes"), std::string::npos) << m;  // only what differs
  }
  // -o naming the output is not a measurement option; a different output file is refused
  EXPECT_FALSE(parse({"--resume", "old.h5", "-o", "old.h5"}).measurementGiven);
  EXPECT_TRUE(parse({"--resume", "old.h5", "-o", "max"}).measurementGiven);
  EXPECT_THROW(parse({"--resume", "old.h5", "-o", "new.h5"}), core::UsageError);
  // recorded arguments this build no longer accepts
  EXPECT_THROW(resumedConfig(parse({"--resume", "x.h5"}), {{"--no-such-option"}, "mpi"}), core::UsageError);
}

core::Topology layout(const std::vector<std::string>& hosts) {
  std::vector<core::HostProbe> probes;
  for (std::size_t r = 0; r < hosts.size(); ++r) {
    core::HostProbe p;
    p.hostname = hosts[r];
    p.sharedLeader = static_cast<int>(std::find(hosts.begin(), hosts.end(), hosts[r]) - hosts.begin());
    probes.push_back(p);
  }
  return topologies::buildTopology(probes, 0);
}

TEST(Resume, RefusesAnotherRankLayout) {
  const core::Topology recorded = layout({"a", "a", "b", "b"});
  EXPECT_EQ(layoutDifference(recorded, layout({"a", "a", "b", "b"})), "");
  EXPECT_NE(layoutDifference(recorded, layout({"a", "a", "b"})).find("measured by 4 ranks, this job has 3"),
            std::string::npos);
  EXPECT_NE(layoutDifference(recorded, layout({"a", "a", "c", "c"})).find("node 1 was b with 2 ranks"),
            std::string::npos);
  EXPECT_NE(layoutDifference(recorded, layout({"a", "b", "a", "b"})).find("rank 1 was local rank 1 of node 0"),
            std::string::npos);
  core::Topology otherGpu = layout({"a", "a", "b", "b"});
  core::Topology withGpus = recorded;
  withGpus.ranks[3].gpuUuid = "GPU-1111";
  otherGpu.ranks[3].gpuUuid = "GPU-2222";
  EXPECT_NE(layoutDifference(withGpus, otherGpu).find("rank 3 measured GPU GPU-1111"), std::string::npos);
}

TEST(Resume, ProvenanceKeepsTheRunAndAddsALinePerResume) {
  core::Provenance p;
  p.createdUtc = "2026-12-01T00:00:00Z";
  p.plannedSteps = 10;
  p = resumedProvenance(p, 12, 4, "2026-12-02T00:00:00Z", "fabricmap run --resume r.h5");
  p = resumedProvenance(p, 12, 9, "2026-12-03T00:00:00Z", "fabricmap run --resume r.h5");
  EXPECT_EQ(p.createdUtc, "2026-12-01T00:00:00Z");
  EXPECT_EQ(p.plannedSteps, 12);
  EXPECT_EQ(p.resumed,
            "2026-12-02T00:00:00Z kept 4 of 12 steps: fabricmap run --resume r.h5\n"
            "2026-12-03T00:00:00Z kept 9 of 12 steps: fabricmap run --resume r.h5");
}

// The file of a run that stopped after `kept` steps of `plan`, as the run would have recorded it.
results::ResultsFile stoppedAfter(const core::Plan& plan, int kept) {
  results::ResultsFile f;
  for (const auto& s : plan.collectiveSteps) {
    if (s.index >= kept) continue;
    core::StepRecord rec = worker::stepHeader(plan, s);
    rec.status = "ok";
    f.steps.push_back(rec);
    core::CollectiveRecord row;
    row.step = s.index;
    row.busbw = 1.5 + s.index;
    f.collectives.push_back(row);
  }
  for (const auto& s : plan.pairSteps) {
    if (s.index >= kept) continue;
    core::StepRecord rec = worker::stepHeader(plan, s);
    rec.status = "ok";
    f.steps.push_back(rec);
    for (const auto& [a, b] : core::pairsOf(s)) {
      core::PairRecord p;
      p.step = s.index;
      p.a = a;
      p.b = b;
      f.pairs.push_back(p);
    }
  }
  core::Finding hang;
  hang.kind = core::FindingKind::kHang;
  core::Finding corrupt;
  corrupt.kind = core::FindingKind::kDataCorruption;
  f.findings = {hang, corrupt};
  return f;
}

core::Plan smallPlan() {
  const ParsedRun parsed =
      parse({"-b", "8", "-e", "128", "--ops", "all_reduce", "--collectives", "--pairwise", "--pairwise-mode", "full"});
  return makePlan(parsed.config, layout({"a", "a", "b", "b"}));
}

TEST(Resume, ReplaysTheRecordedStepsOfTheSamePlan) {
  const core::Plan plan = smallPlan();
  const int collectives = static_cast<int>(plan.collectiveSteps.size());
  ASSERT_GT(plan.pairSteps.size(), 1u);
  const int kept = collectives + 1;  // every collective and the first pairwise round
  const Replay replay(stoppedAfter(plan, kept));
  EXPECT_EQ(replay.recordedSteps(), kept);
  const std::vector<char> flags = replay.match(plan, 0, true);
  ASSERT_EQ(flags.size(), static_cast<std::size_t>(plan.stepCount()));
  for (int i = 0; i < plan.stepCount(); ++i) EXPECT_EQ(flags[static_cast<std::size_t>(i)], i < kept) << "step " << i;
  const worker::StepResult step2 = replay.result(plan.collectiveSteps[2]);
  EXPECT_EQ(step2.step.step, 2);
  ASSERT_EQ(step2.rows.size(), 1u);
  EXPECT_EQ(step2.rows[0].busbw, 3.5);
  EXPECT_EQ(replay.result(plan.pairSteps[0]).rows.size(), core::pairsOf(plan.pairSteps[0]).size());
  // only the hang is carried: corruption comes back with the replayed rows
  ASSERT_EQ(replay.carriedFindings().size(), 1u);
  EXPECT_EQ(replay.carriedFindings()[0].kind, core::FindingKind::kHang);
}

TEST(Resume, RefusesAFileOfAnotherPlan) {
  const core::Plan plan = smallPlan();
  results::ResultsFile other = stoppedAfter(plan, 3);
  other.steps[1].bytes *= 2;  // measured with other sizes
  try {
    Replay(other).match(plan, 0, true);
    FAIL() << "another plan was accepted";
  } catch (const core::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("step 1 of the file is collective"), std::string::npos) << e.what();
  }
  // a retest of other pairs (not strict) runs again instead
  const int firstPair = plan.pairSteps[0].index;
  results::ResultsFile retested = stoppedAfter(plan, firstPair + 1);
  retested.pairs.back().b = 99;
  const std::vector<char> flags = Replay(retested).match(plan, firstPair, false);
  ASSERT_FALSE(flags.empty());
  EXPECT_EQ(flags[0], 0);
  EXPECT_THROW(Replay(retested).match(plan, 0, true), core::UsageError);
}

core::Provenance someProvenance() {
  core::Provenance p;
  p.plannedSteps = 1;
  return p;
}

core::StepRecord someStep() {
  core::StepRecord s;
  s.kind = core::StepKind::kCollective;
  s.status = "waived";
  return s;
}

// A resumed run's file sinks: until published, the stopped run's file and journal stay what readers
// see; published, the new journal takes over first, then the file.
TEST(Resume, FileSinksReplaceTheStoppedRunOnlyWhenPublished) {
  const fs::path dir = fs::temp_directory_path() / ("fabricmap-resume-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "run.h5").string();
  {
    results::H5Sink file(path);
    results::JournalSink journal(path);
    core::Provenance p = someProvenance();
    p.plannedSteps = 2;
    file.begin(p, {}, {});
    journal.begin(p, {}, {});
    file.step(someStep(), {});
    journal.step(someStep(), {});
    // stopped here
  }
  ASSERT_EQ(results::readResults(path).steps.size(), 1u);
  {
    results::H5Sink file(path, results::Publish::kWhenAsked);
    results::JournalSink journal(path, results::Publish::kWhenAsked);
    core::Provenance p = someProvenance();
    p.plannedSteps = 2;
    p.resumed = "now";
    file.begin(p, {}, {});
    journal.begin(p, {}, {});
    EXPECT_TRUE(fs::exists(results::unpublishedPath(path)));
    EXPECT_TRUE(fs::exists(results::unpublishedPath(results::journalPath(path))));
    EXPECT_EQ(results::readResults(path).provenance.resumed, "");  // still the stopped run
    file.step(someStep(), {});
    journal.step(someStep(), {});
    journal.publish();
    const results::ResultsFile mid = results::readResults(path);
    EXPECT_EQ(mid.provenance.resumed, "now");
    EXPECT_EQ(mid.recoveredFrom, results::journalPath(path));
    file.publish();
    EXPECT_FALSE(fs::exists(results::unpublishedPath(path)));
    file.step(someStep(), {});
    journal.step(someStep(), {});
    file.finish(true);
    journal.finish(true);
  }
  const results::ResultsFile done = results::readResults(path);
  EXPECT_TRUE(done.complete);
  EXPECT_TRUE(done.recoveredFrom.empty());
  EXPECT_EQ(done.steps.size(), 2u);
  EXPECT_FALSE(fs::exists(results::journalPath(path)));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace fabricmap::orchestrator
