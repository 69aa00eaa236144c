// The planner and the rank-to-node map, for regular and odd layouts, without MPI.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "orchestrator/run/planner.h"
#include "topologies/rank_map.h"

namespace fabricmap::orchestrator {
namespace {

using Groups = std::vector<std::vector<int>>;

// Probes as MPI would report them: one host name and shared-memory leader per rank.
std::vector<core::HostProbe> probesOn(const std::vector<std::string>& hostOfRank) {
  std::vector<core::HostProbe> probes;
  for (std::size_t r = 0; r < hostOfRank.size(); ++r) {
    core::HostProbe p;
    p.hostname = hostOfRank[r];
    p.memAvailableBytes = 16ull << 30;
    p.sharedLeader = -1;
    for (std::size_t q = 0; q <= r; ++q) {
      if (hostOfRank[q] == hostOfRank[r]) {
        p.sharedLeader = static_cast<int>(q);
        break;
      }
    }
    probes.push_back(p);
  }
  return probes;
}

core::Topology emulated(int ranks, int perNode) {
  return topologies::buildTopology(probesOn(std::vector<std::string>(static_cast<std::size_t>(ranks), "h")),
                                   perNode);
}

TEST(RankMap, RealNodesFromSharedMemoryLeaders) {
  // round-robin placement: ranks 0,2 on a; 1,3 on b
  const core::Topology t = topologies::buildTopology(probesOn({"a", "b", "a", "b"}), 0);
  ASSERT_EQ(t.nodes.size(), 2u);
  EXPECT_FALSE(t.emulated);
  EXPECT_EQ(t.nodes[0].hostname, "a");
  EXPECT_EQ(t.nodes[1].name, "b");
  EXPECT_EQ(t.ranks[2].node, 0);
  EXPECT_EQ(t.ranks[2].localRank, 1);
  EXPECT_EQ(t.ranks[3].node, 1);
  EXPECT_EQ(t.ranks[3].localRank, 1);
  EXPECT_EQ(t.nodes[0].ranks, 2);
  EXPECT_EQ(t.nodes[0].topologyClass, "NO_GPU");
}

TEST(RankMap, EmulatedBlocksMayBeUneven) {
  const core::Topology t = emulated(5, 2);
  EXPECT_TRUE(t.emulated);
  EXPECT_EQ(t.ranksPerNode, 2);
  ASSERT_EQ(t.nodes.size(), 3u);
  EXPECT_EQ(t.nodes[2].ranks, 1);
  EXPECT_EQ(t.ranks[4].node, 2);
  EXPECT_EQ(t.ranks[4].localRank, 0);
  EXPECT_EQ(t.nodes[1].name, "h/1");
}

TEST(Scopes, OneNodeWaivesIntraAndInter) {
  const core::Topology t = topologies::buildTopology(probesOn({"a", "a", "a", "a"}), 0);
  std::vector<core::ScopePlan> scopes;
  for (core::Scope s : core::allScopes()) scopes.push_back(planScope(s, t, scopes));
  EXPECT_EQ(scopes[0].groups, (Groups{{0, 1, 2, 3}}));
  EXPECT_TRUE(scopes[0].waiver.empty());
  EXPECT_NE(scopes[1].waiver.find("same groups as scope world"), std::string::npos);
  EXPECT_NE(scopes[2].waiver.find("one node"), std::string::npos);
}

TEST(Scopes, FourRanksTwoPerNode) {
  const core::Topology t = emulated(4, 2);
  EXPECT_EQ(planScope(core::Scope::kIntra, t, {}).groups, (Groups{{0, 1}, {2, 3}}));
  EXPECT_EQ(planScope(core::Scope::kInter, t, {}).groups, (Groups{{0, 2}, {1, 3}}));
}

TEST(Scopes, ThreeRanksOnTwoNodes) {
  const core::Topology t = emulated(3, 2);  // node0 {0,1}, node1 {2}
  EXPECT_EQ(planScope(core::Scope::kIntra, t, {}).groups, (Groups{{0, 1}}));
  EXPECT_EQ(planScope(core::Scope::kInter, t, {}).groups, (Groups{{0, 2}}));  // rail 1 has one rank
}

TEST(Scopes, UnevenInterleavedNodes) {
  // a: 0,2,3  b: 1,4  c: 5
  const core::Topology t = topologies::buildTopology(probesOn({"a", "b", "a", "a", "b", "c"}), 0);
  EXPECT_EQ(planScope(core::Scope::kIntra, t, {}).groups, (Groups{{0, 2, 3}, {1, 4}}));
  EXPECT_EQ(planScope(core::Scope::kInter, t, {}).groups, (Groups{{0, 1, 5}, {2, 4}}));
}

TEST(Scopes, OneRankPerNodeMakesInterTheWorld) {
  const core::Topology t = emulated(4, 1);
  std::vector<core::ScopePlan> scopes;
  for (core::Scope s : core::allScopes()) scopes.push_back(planScope(s, t, scopes));
  EXPECT_NE(scopes[1].waiver.find("single rank"), std::string::npos);
  EXPECT_NE(scopes[2].waiver.find("same groups as scope world"), std::string::npos);
}

TEST(Scopes, SingleRankWorld) {
  const core::ScopePlan p = planScope(core::Scope::kWorld, emulated(1, 0), {});
  EXPECT_TRUE(p.groups.empty());
  EXPECT_NE(p.waiver.find("single rank"), std::string::npos);
  // --min-group 1: a one-GPU smoke test runs the one-rank group
  EXPECT_EQ(planScope(core::Scope::kWorld, emulated(1, 0), {}, 1).groups, (Groups{{0}}));
  EXPECT_EQ(parseRunOptions({"--min-group", "1"}).config.minGroup, 1);
  EXPECT_THROW(parseRunOptions({"--min-group", "0"}), core::UsageError);
}

RunConfig smallConfig() {
  RunConfig c = parseRunOptions({"-b", "8", "-e", "128", "-f", "4", "-n", "3", "--collectives"}).config;
  return c;
}

TEST(Plan, StepOrderScopeOpSizePlacement) {
  RunConfig c = smallConfig();  // sizes 8, 32, 128
  c.ops = {core::Op::kAllReduce, core::Op::kAllGather};
  const core::Plan plan = makePlan(c, emulated(4, 2));
  ASSERT_EQ(plan.scopes.size(), 3u);
  // 3 scopes x 2 ops x 3 sizes x 2 placements
  ASSERT_EQ(plan.collectiveSteps.size(), 36u);
  for (std::size_t i = 0; i < plan.collectiveSteps.size(); ++i) EXPECT_EQ(plan.collectiveSteps[i].index, static_cast<int>(i));
  EXPECT_EQ(plan.collectiveSteps[0].op, core::Op::kAllReduce);
  EXPECT_FALSE(plan.collectiveSteps[0].inPlace);
  EXPECT_TRUE(plan.collectiveSteps[1].inPlace);
  EXPECT_EQ(plan.collectiveSteps[2].bytes, 32u);
  EXPECT_EQ(plan.collectiveSteps[6].op, core::Op::kAllGather);
  EXPECT_EQ(plan.collectiveSteps[12].scopeIndex, 1);
  // all_gather of 8 B over 4 ranks is less than one float each: waived with the reason
  EXPECT_NE(plan.collectiveSteps[6].waiver.find("less than one float per rank for 4 ranks"), std::string::npos);
  EXPECT_TRUE(plan.collectiveSteps[8].waiver.empty());  // 32 B = 2 floats per rank
  // in the 2-rank intra groups 8 B is one float per rank: runs
  EXPECT_TRUE(plan.collectiveSteps[18].waiver.empty());
  EXPECT_EQ(plan.collectiveSteps[18].op, core::Op::kAllGather);
}

TEST(Plan, ReductionOpsOnlyMultiplyReducingCollectives) {
  RunConfig c = smallConfig();
  c.ops = {core::Op::kAllReduce, core::Op::kBroadcast};
  c.redops = {core::RedOp::kSum, core::RedOp::kMax};
  c.placement = Placement::kOutOfPlace;
  c.scopes = {core::Scope::kWorld};
  const core::Plan plan = makePlan(c, emulated(2, 0));
  EXPECT_EQ(plan.collectiveSteps.size(), 3u * 2 + 3u);
}

TEST(Plan, RootMustLieInEveryGroup) {
  RunConfig c = smallConfig();
  c.root = 2;
  c.ops = {core::Op::kBroadcast};
  EXPECT_NO_THROW(makePlan(c, emulated(4, 0)));
  try {
    makePlan(c, emulated(4, 2));  // intra groups have 2 ranks
    FAIL();
  } catch (const core::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("scope intra"), std::string::npos);
  }
  c.ops = {core::Op::kAllReduce};  // root is irrelevant
  EXPECT_NO_THROW(makePlan(c, emulated(4, 2)));
}

TEST(Plan, MemoryCheckNamesTheNode) {
  RunConfig c = smallConfig();
  c.maxBytes = 4ull << 30;
  c.minBytes = 4ull << 30;
  c.ops = {core::Op::kAllToAll};
  c.scopes = {core::Scope::kWorld};
  const core::Topology t = emulated(4, 0);  // 16 GiB available, 4 ranks x 8 GiB needed
  const core::Plan plan = makePlan(c, t);
  EXPECT_EQ(peakBytesPerRank(plan), 8ull << 30);
  try {
    checkMemory(plan, t);
    FAIL();
  } catch (const core::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("max-bytes"), std::string::npos);
  }
  c.maxBytes = c.minBytes = 1ull << 30;
  EXPECT_NO_THROW(checkMemory(makePlan(c, t), t));
  // emulated nodes of one rank each still share the host: 4 x 8 GiB does not fit in 16 GiB
  c.maxBytes = c.minBytes = 4ull << 30;
  const core::Topology split = emulated(4, 1);
  EXPECT_THROW(checkMemory(makePlan(c, split), split), core::UsageError);
}

TEST(Plan, FootprintIsLargestInputPlusLargestOutput) {
  RunConfig c = smallConfig();
  c.minBytes = c.maxBytes = 1u << 20;
  c.ops = {core::Op::kReduceScatter, core::Op::kAllGather};
  c.placement = Placement::kOutOfPlace;
  c.scopes = {core::Scope::kWorld};
  // reduce_scatter reads 1 MiB, all_gather writes 1 MiB; buffers are kept across steps
  EXPECT_EQ(peakBytesPerRank(makePlan(c, emulated(4, 0))), 2u << 20);
}

TEST(Plan, ScopeRecordsDescribeGroups) {
  const core::Plan plan = makePlan(smallConfig(), emulated(4, 2));
  const auto records = scopeRecords(plan);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[1].members, "0-1;2-3");
  EXPECT_EQ(records[2].members, "0,2;1,3");
  EXPECT_EQ(records[2].status, "active");
}

// --storage: write (with --storage-write), read, random reads; every rank or each node's first;
// the run's own files removed after the last; blocks no larger than the bytes.
TEST(Plan, StorageStepsAfterTheTrainingPattern) {
  RunConfig c = parseRunOptions({"--storage", "/data", "--storage-write", "--storage-ranks", "node", "--pairwise"}).config;
  const core::Topology t = emulated(4, 2);
  const core::Plan plan = makePlan(c, t);
  ASSERT_EQ(plan.storageSteps.size(), 3u);
  EXPECT_EQ(plan.storageSteps[0].test, core::StorageTest::kWrite);
  EXPECT_EQ(plan.storageSteps[1].test, core::StorageTest::kRead);
  EXPECT_EQ(plan.storageSteps[2].test, core::StorageTest::kRandomRead);
  for (std::size_t i = 0; i < 3; ++i) {
    const core::StorageStep& s = plan.storageSteps[i];
    EXPECT_EQ(s.index, static_cast<int>(i));  // before the pairwise rounds
    EXPECT_EQ(s.ranks, (std::vector<int>{0, 2}));
    EXPECT_TRUE(s.ownFiles);
    EXPECT_EQ(s.path, "/data");
    EXPECT_EQ(s.bytes, 1ull << 30);
    EXPECT_EQ(s.removeAfter, i == 2);
  }
  EXPECT_EQ(plan.storageSteps[0].blockBytes, kStorageBlockBytes);
  EXPECT_EQ(plan.storageSteps[2].blockBytes, kRandomReadBytes);
  EXPECT_GT(plan.storageSteps[2].seconds, 0);
  EXPECT_EQ(plan.pairSteps.front().index, 3);
  // without --storage-write: the files found are read, on every rank; a small size is one block
  c = parseRunOptions({"--storage", "/data", "--storage-bytes", "100K"}).config;
  const core::Plan read = makePlan(c, t);
  ASSERT_EQ(read.storageSteps.size(), 2u);
  EXPECT_FALSE(read.storageSteps[0].ownFiles);
  EXPECT_FALSE(read.storageSteps[1].removeAfter);
  EXPECT_EQ(read.storageSteps[0].ranks, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(read.storageSteps[0].blockBytes, 100u << 10);
  EXPECT_TRUE(read.collectiveSteps.empty());  // --storage alone is the only phase
  EXPECT_TRUE(read.pairSteps.empty());
  EXPECT_EQ(describe(read, read.storageSteps[1]), "storage randread /data on 4 rank(s) (100 KiB)");
}

TEST(Plan, StorageOptionsNeedAPath) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--storage-write"}, {"--storage-bytes", "1G"}, {"--storage-ranks", "node"}}) {
    EXPECT_THROW(parseRunOptions(args), core::UsageError) << args.front();
  }
  EXPECT_THROW(parseRunOptions({"--storage", "/x", "--storage-ranks", "some"}), core::UsageError);
  EXPECT_THROW(parseRunOptions({"--storage", "/x", "--storage-bytes", "1K"}), core::UsageError);
}

}  // namespace
}  // namespace fabricmap::orchestrator
