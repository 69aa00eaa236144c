// Multi-rank tests of the MPI backend and the executor, run under mpiexec -n 2, 3, 4 and 8.
// Every rank runs every test; results are combined with MPI so all ranks agree (and only
// non-fatal EXPECTs are used, so no rank leaves a collective early).
#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/pattern_for.h"
#include "core/units.h"
#include "topologies/host_probe.h"
#include "topologies/rank_map.h"
#include "worker/executor.h"
#include "tests/common/backend_checks.h"
#include "worker/mpi/backend.h"

namespace fabricmap::worker {
namespace {

int worldRank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int worldSize() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

using test_support::sumOverRanks;

// Every op x host type x reduction x placement: exact results, an element corrupted on one rank
// counted exactly once, and an op that did not run detected.
TEST(MpiCollectives, EveryOpTypeReductionAndPlacementIsExact) {
  std::unique_ptr<Backend> backend = mpi::createBackend();
  const std::vector<core::DType> hostTypes{core::DType::kInt8,  core::DType::kUint8, core::DType::kInt32,
                                           core::DType::kUint32, core::DType::kInt64, core::DType::kUint64,
                                           core::DType::kFloat, core::DType::kDouble};
  const test_support::CheckedCases cases = test_support::checkEveryCollective(*backend, hostTypes);
  EXPECT_EQ(cases.run, 3 * 8 * 4 * 2 + 4 * 8 * 2);
  EXPECT_EQ(cases.waived, 0);
}

TEST(MpiCollectives, HalfAndBfloat16AreWaivedNotFailed) {
  std::unique_ptr<Backend> backend = mpi::createBackend();
  core::CollectiveStep step;
  step.bytes = 1024;
  for (core::DType t : {core::DType::kHalf, core::DType::kBfloat16}) {
    step.dtype = t;
    EXPECT_NE(backend->waiver(specFor(step, worldSize())).find("MPI has no"), std::string::npos);
  }
}

// The pair streams, ping-pongs and checked transfers between every pair of ranks conform
// (tests/common/backend_checks), eager and rendezvous sizes, osu_bw's window and one.
TEST(MpiPairs, EveryPairStreamsAndArrivesExact) {
  std::unique_ptr<worker::Backend> backend = worker::mpi::createBackend();
  EXPECT_EQ(test_support::checkEveryPair(*backend), 0u);
}

// Host-memory copies between pairs of ranks: every phase timed on the rank that copies, exact data
// both ways; an odd rank outside a pair only waits.
TEST(MpiCopies, HostCopiesBetweenPairsAreTimedAndExact) {
  std::unique_ptr<Backend> backend = mpi::createBackend();
  // 1 MiB + 12 B: not a multiple of a page or of 16
  const int ran = test_support::checkCopies(*backend, (1u << 20) + 12);
  const int pairs = worldSize() >= 4 ? 2 : 1;
  EXPECT_EQ(ran, worldRank() < 2 * pairs ? 1 : 0);
}

core::Topology emulatedTopology(int ranksPerNode) {
  return topologies::buildTopology(exchangeProbes(MPI_COMM_WORLD, topologies::probeHost()),
                                   ranksPerNode);
}

// A small plan over every scope with 2 ranks per emulated node: all groups of a scope run at once
// and each is recorded with its own ranks and a sane timing.
core::Plan smallPlan(const core::Topology& topo) {
  core::Plan plan;
  for (core::Scope s : core::allScopes()) {
    core::ScopePlan sp;
    sp.scope = s;
    if (s == core::Scope::kWorld) {
      std::vector<int> all;
      for (const auto& r : topo.ranks) all.push_back(r.rank);
      sp.groups.push_back(all);
    } else if (s == core::Scope::kIntra) {
      sp.groups.resize(topo.nodes.size());
      for (const auto& r : topo.ranks) sp.groups[static_cast<std::size_t>(r.node)].push_back(r.rank);
    } else {
      int rails = 0;
      for (const auto& r : topo.ranks) rails = std::max(rails, r.localRank + 1);
      sp.groups.resize(static_cast<std::size_t>(rails));
      for (const auto& r : topo.ranks) sp.groups[static_cast<std::size_t>(r.localRank)].push_back(r.rank);
    }
    std::erase_if(sp.groups, [](const auto& g) { return g.size() < 2; });
    if (sp.groups.empty()) sp.waiver = "trivial";
    plan.scopes.push_back(sp);
  }
  for (std::size_t si = 0; si < plan.scopes.size(); ++si) {
    if (!plan.scopes[si].waiver.empty()) continue;
    for (const auto& op : core::allOps()) {
      for (std::uint64_t bytes : {std::uint64_t{4096}, std::uint64_t{262144}}) {
        core::CollectiveStep step;
        step.index = static_cast<int>(plan.collectiveSteps.size());
        step.scopeIndex = static_cast<int>(si);
        step.op = op.op;
        step.bytes = bytes;
        step.iters = 5;
        step.warmup = 1;
        plan.collectiveSteps.push_back(step);
      }
    }
  }
  return plan;
}

TEST(Executor, RecordsEveryGroupOfEveryScope) {
  const core::Topology topo = emulatedTopology(2);
  const core::Plan plan = smallPlan(topo);
  std::unique_ptr<Backend> backend = mpi::createBackend();
  Executor executor(MPI_COMM_WORLD, *backend, plan, topo);
  for (const auto& step : plan.collectiveSteps) {
    const StepResult result = executor.run(step);
    if (worldRank() != 0) continue;
    const auto& scope = plan.scopes[static_cast<std::size_t>(step.scopeIndex)];
    EXPECT_EQ(result.step.status, "ok");
    ASSERT_EQ(result.rows.size(), scope.groups.size());
    for (std::size_t g = 0; g < scope.groups.size(); ++g) {
      const core::CollectiveRecord& row = result.rows[g];
      EXPECT_EQ(row.group, static_cast<int>(g));
      EXPECT_EQ(row.ranks, core::formatRanks(scope.groups[g]));
      EXPECT_EQ(row.nranks, static_cast<int>(scope.groups[g].size()));
      EXPECT_EQ(row.wrong, 0u);
      EXPECT_TRUE(std::isfinite(row.busbw) && row.busbw > 0) << row.op << " " << row.busbw;
      EXPECT_TRUE(row.algbw > 0);
      EXPECT_LE(row.timeUs.min, row.timeUs.median);
      EXPECT_LE(row.timeUs.median, row.timeUs.max);
      EXPECT_LE(row.timeUs.p95, row.timeUs.max);
      EXPECT_GE(row.timeUs.mean, row.timeUs.min);
      EXPECT_LE(row.timeUs.mean, row.timeUs.max);
      EXPECT_NEAR(row.busbw, core::busbwGBs(step.op, row.bytes, row.timeUs.mean * 1e-6, row.nranks),
                  1e-9 * row.busbw);
    }
  }
}

TEST(Executor, InjectedCorruptionIsAttributedToItsRank) {
  const core::Topology topo = emulatedTopology(2);
  const core::Plan plan = smallPlan(topo);
  std::unique_ptr<Backend> backend = mpi::createBackend();
  const int victim = worldSize() - 1;
  core::Fault fault;
  fault.rank = victim;
  fault.op = core::Op::kAllReduce;
  Executor executor(MPI_COMM_WORLD, *backend, plan, topo, {fault});
  int expectedRows = 0;  // all_reduce rows of groups that contain the victim
  for (const auto& step : plan.collectiveSteps) {
    if (step.op != core::Op::kAllReduce) continue;
    for (const auto& g : plan.scopes[static_cast<std::size_t>(step.scopeIndex)].groups) {
      expectedRows += std::count(g.begin(), g.end(), victim) > 0 ? 1 : 0;
    }
  }
  int corruptedRows = 0;
  for (const auto& step : plan.collectiveSteps) {
    const StepResult result = executor.run(step);
    if (worldRank() != 0) continue;
    for (const auto& row : result.rows) {
      const std::vector<int>& members =
          plan.scopes[static_cast<std::size_t>(step.scopeIndex)].groups[static_cast<std::size_t>(row.group)];
      const bool hit = std::count(members.begin(), members.end(), victim) > 0;
      if (step.op == core::Op::kAllReduce && hit) {
        EXPECT_EQ(result.step.status, "wrong");
        EXPECT_EQ(row.wrong, 1u);
        EXPECT_EQ(row.wrongRanks, std::to_string(victim));
        ++corruptedRows;
      } else {
        EXPECT_EQ(row.wrong, 0u) << row.op;
      }
    }
  }
  if (worldRank() == 0) {
    EXPECT_GT(expectedRows, 0);
    EXPECT_EQ(corruptedRows, expectedRows);
  }
}

double cpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// Ranks outside the running group must sleep, not spin: with more ranks than cores a spinning
// bystander takes CPU from the pair being measured. A spinner gets the same share of the cores as
// the measuring ranks (everyone is runnable all the time); a sleeper polls about once a millisecond.
// The bound is relative to the measuring ranks' own share, so a loaded machine, which lowers every
// share alike, cannot fail a sleeper nor pass a spinner; the step lasts long enough (~0.5 s) that
// the fixed costs around it do not count.
TEST(Executor, RanksOutsideTheGroupSleep) {
  const int n = worldSize();
  if (n < 4) GTEST_SKIP() << "needs bystanders";
  core::Plan plan;
  core::ScopePlan pair;
  pair.groups = {{0, 1}};
  plan.scopes.push_back(pair);
  core::CollectiveStep step;
  step.op = core::Op::kAllReduce;
  step.bytes = 8u << 20;
  step.iters = 100;
  step.warmup = 1;
  plan.collectiveSteps.push_back(step);
  std::unique_ptr<Backend> backend = mpi::createBackend();
  const core::Topology topo = emulatedTopology(0);
  Executor executor(MPI_COMM_WORLD, *backend, plan, topo);
  MPI_Barrier(MPI_COMM_WORLD);
  const double cpu0 = cpuSeconds();
  const double wall0 = MPI_Wtime();
  executor.run(step);
  const double fraction = (cpuSeconds() - cpu0) / (MPI_Wtime() - wall0);
  std::vector<double> all(static_cast<std::size_t>(n));
  MPI_Gather(&fraction, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (worldRank() == 0) {
    for (double f : all) std::printf("%.3f ", f);
    std::printf(" (CPU fraction per rank)\n");
    const double measuring = std::min(all[0], all[1]);
    EXPECT_GT(measuring, 0.05) << "the measuring ranks did work";
    for (int r = 2; r < n; ++r) {
      EXPECT_LT(all[static_cast<std::size_t>(r)], 0.35 * measuring)
          << "bystander rank " << r << " used " << all[static_cast<std::size_t>(r)]
          << " of a core; the measuring ranks " << measuring;
    }
  }
}

}  // namespace
}  // namespace fabricmap::worker
