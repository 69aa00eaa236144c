// Pairwise scheduling (circle method, quick mode, retests) and matrix building, without MPI.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include <filesystem>
#include <string>
#include <unistd.h>

#include "core/error.h"
#include "core/plan.h"
#include "core/units.h"
#include "orchestrator/analysis/analysis.h"
#include "orchestrator/analysis/matrices.h"
#include "orchestrator/run/planner.h"
#include "results/h5_reader.h"
#include "results/h5_writer.h"
#include "results/json.h"
#include "topologies/rank_map.h"

namespace fabricmap::orchestrator {
namespace {

using Pairs = std::vector<std::pair<int, int>>;

void expectDisjoint(const Pairs& round) {
  std::set<int> seen;
  for (const auto& [a, b] : round) {
    EXPECT_NE(a, b);
    EXPECT_TRUE(seen.insert(a).second) << a << " twice in a round";
    EXPECT_TRUE(seen.insert(b).second) << b << " twice in a round";
  }
}

TEST(CircleMethod, EveryPairOnceInDisjointRounds) {
  for (int n = 2; n <= 17; ++n) {
    EXPECT_EQ(core::circleRounds(n), n % 2 == 0 ? n - 1 : n);
    std::set<std::pair<int, int>> all;
    for (int r = 0; r < core::circleRounds(n); ++r) {
      const Pairs round = core::circleRound(n, r);
      EXPECT_EQ(static_cast<int>(round.size()), n / 2) << "n=" << n << " round " << r;
      expectDisjoint(round);
      for (const auto& [a, b] : round) {
        EXPECT_LT(a, b);
        EXPECT_TRUE(all.emplace(a, b).second) << "pair " << a << "," << b << " twice, n=" << n;
      }
    }
    EXPECT_EQ(static_cast<int>(all.size()), n * (n - 1) / 2) << "n=" << n;
  }
  EXPECT_EQ(core::circleRounds(1), 0);
  EXPECT_TRUE(core::circleRound(1, 0).empty());
}

TEST(CircleMethod, LargeScheduleIsComputedPerRound) {
  // 512 nodes: 511 rounds of 256 pairs, computed on demand
  EXPECT_EQ(core::circleRounds(512), 511);
  const Pairs last = core::circleRound(512, 510);
  EXPECT_EQ(last.size(), 256u);
  expectDisjoint(last);
}

// The side that streams first: each member leads half its pairs of a full schedule, and a round
// seldom has a leaf of 8 consecutive members all sending or all receiving first (with the lower
// member leading, 352 of the 504 leaf-rounds of 64 members did, and their cables were crowded).
TEST(CircleMethod, EveryMemberLeadsHalfItsPairsAndLeavesMix) {
  EXPECT_TRUE(core::aStreamsFirst(0, 1));
  constexpr int n = 64;
  constexpr int perLeaf = 8;
  std::vector<int> leads(n, 0);
  int crowded = 0;
  for (int r = 0; r < n - 1; ++r) {
    std::vector<int> senders(n / perLeaf, 0);
    for (const auto& [a, b] : core::circleRound(n, r)) {
      const int leader = core::aStreamsFirst(a, b) ? a : b;
      ++leads[static_cast<std::size_t>(leader)];
      ++senders[static_cast<std::size_t>(leader / perLeaf)];
    }
    for (int s : senders) crowded += s <= 1 || s >= perLeaf - 1 ? 1 : 0;
  }
  for (int m = 0; m < n; ++m) {
    EXPECT_GE(leads[static_cast<std::size_t>(m)], n / 2 - 1) << m;
    EXPECT_LE(leads[static_cast<std::size_t>(m)], n / 2) << m;
  }
  EXPECT_LT(crowded * 5, (n - 1) * (n / perLeaf)) << "leaf-rounds with a leaf all leading or all led";
}

TEST(PackRounds, DisjointAndComplete) {
  const Pairs pairs{{0, 1}, {0, 2}, {1, 2}, {3, 4}, {0, 3}, {2, 4}};
  const auto rounds = core::packRounds(pairs);
  std::multiset<std::pair<int, int>> seen;
  for (const auto& r : rounds) {
    expectDisjoint(r);
    seen.insert(r.begin(), r.end());
  }
  const std::multiset<std::pair<int, int>> want(pairs.begin(), pairs.end());
  EXPECT_EQ(seen, want);
  // the triangle 0-1-2 needs three rounds; greedy packing stays within 2 x max degree - 1
  EXPECT_GE(rounds.size(), 3u);
  EXPECT_LE(rounds.size(), 5u);
}

// Two leaves of four nodes: a pair across them holds both leaves' uplinks, so a round holds at
// most one such pair; pairs inside a leaf hold nothing and fill the rounds beside it.
TEST(PackRounds, PairsAcrossLeavesNeverShareAnUplinkInARound) {
  const std::vector<std::vector<int>> claims{{10}, {10}, {10}, {10}, {11}, {11}, {11}, {11}};
  const Pairs pairs{{0, 4}, {1, 5}, {2, 6}, {3, 7}, {0, 1}, {2, 3}, {4, 5}, {6, 7}};
  const auto rounds = core::packRounds(pairs, claims);
  std::multiset<std::pair<int, int>> seen;
  for (const auto& r : rounds) {
    expectDisjoint(r);
    int across = 0;
    for (const auto& [a, b] : r) across += a / 4 != b / 4 ? 1 : 0;
    EXPECT_LE(across, 1);
    seen.insert(r.begin(), r.end());
  }
  const std::multiset<std::pair<int, int>> want(pairs.begin(), pairs.end());
  EXPECT_EQ(seen, want);
  EXPECT_EQ(rounds.size(), 4u);  // the four crossing pairs, one a round
  // without claims the same pairs pack into fewer rounds, crossing pairs side by side
  EXPECT_EQ(core::packRounds(pairs)[0].size(), 4u);
}

// A part as wide as two cables carries two pairs a round: the four crossing pairs of two leaves
// with two uplinks each take two rounds, two side by side, not four.
TEST(PackRounds, AWidePartCarriesAPairPerCable) {
  const std::vector<std::vector<int>> claims{{10}, {10}, {10}, {10}, {11}, {11}, {11}, {11}};
  const Pairs pairs{{0, 4}, {1, 5}, {2, 6}, {3, 7}};
  const auto rounds = core::packRounds(pairs, claims, {{10, 2}, {11, 2}});
  ASSERT_EQ(rounds.size(), 2u);
  for (const auto& r : rounds) EXPECT_EQ(r.size(), 2u);
  EXPECT_EQ(core::packRounds(pairs, claims, {{10, 4}, {11, 4}}).size(), 1u);
}

// A leaf whose every pair looks slow (a fault under it) holds far more pairs than the others: it
// may hold several per round, so that it does not take a round per pair. Leaf 100 (members 0..7)
// has 32 pairs, the 16 two-member leaves 2 each: 4 rounds (each member of 100 is in 4 pairs),
// not 32.
TEST(PackRounds, AFaultyLeafDoesNotTakeARoundPerPair) {
  std::vector<std::vector<int>> claims(40);
  for (int m = 0; m < 40; ++m) claims[static_cast<std::size_t>(m)] = {m < 8 ? 100 : 1 + (m - 8) / 2};
  Pairs pairs;
  for (int a = 0; a < 8; ++a) {
    for (int j = 0; j < 4; ++j) pairs.emplace_back(a, 8 + 4 * a + j);
  }
  const auto rounds = core::packRounds(pairs, claims);
  EXPECT_EQ(rounds.size(), 4u);
  std::size_t seen = 0;
  for (const auto& r : rounds) {
    expectDisjoint(r);
    seen += r.size();
  }
  EXPECT_EQ(seen, pairs.size());
}

// A healthy leaf whose pairs met on its uplinks in the first pass holds more suspects than the
// others, yet few enough that one a round costs at most three times the rounds the busiest member
// needs: it is held once a round, so that no two of its pairs meet on a cable again. Leaf 100
// (members 0..6) has 12 pairs, member 0 six of them: 12 rounds, not 6 with two pairs each.
TEST(PackRounds, ALeafWithAFewMoreSuspectsIsStillHeldOnceARound) {
  std::vector<std::vector<int>> claims(30);
  for (int m = 0; m < 30; ++m) claims[static_cast<std::size_t>(m)] = {m < 7 ? 100 : m};
  Pairs pairs;
  for (int j = 0; j < 6; ++j) pairs.emplace_back(0, 7 + j);
  for (int a = 1; a < 7; ++a) pairs.emplace_back(a, 13 + a);
  const auto rounds = core::packRounds(pairs, claims);
  EXPECT_EQ(rounds.size(), 12u);
  for (const auto& r : rounds) {
    expectDisjoint(r);
    EXPECT_EQ(r.size(), 1u);
  }
}

// A three-level claim: nodes under one pod switch share it; a pair inside the pod holds only
// the two leaves, a pair across pods the leaves and both pods' switches.
TEST(PackRounds, AClaimBothEndsHoldIsNotHeld) {
  const std::vector<std::vector<int>> claims{{1, 100}, {2, 100}, {3, 100}, {4, 100}, {5, 101}, {6, 101}};
  // (0,1) holds 1, 2; (2,3) holds 3, 4: one round. (0,4) and (2,5) both hold pods 100 and 101.
  const auto inPod = core::packRounds({{0, 1}, {2, 3}}, claims);
  EXPECT_EQ(inPod.size(), 1u);
  const auto acrossPods = core::packRounds({{0, 4}, {2, 5}}, claims);
  EXPECT_EQ(acrossPods.size(), 2u);
}

// Lanes: a subnet routing by destination (D-mod-K) sends a leaf's traffic towards destination d
// up the cable of d's lane and brings traffic into d down the cable of d's lane. Four leaves of
// eight members under four cables each (lane = position modulo 4): with lanes, no directed cable
// carries two pairs of a round in any round of quick mode's pairs; with the widths alone some do.
TEST(PackRounds, LanesKeepEachCableOfARoundToOnePairUnderRoutingByDestination) {
  constexpr int kMembers = 32;
  std::vector<std::vector<int>> claims(kMembers);
  std::vector<std::vector<int>> lanes(kMembers);
  for (int m = 0; m < kMembers; ++m) {
    claims[static_cast<std::size_t>(m)] = {100 + m / 8};
    lanes[static_cast<std::size_t>(m)] = {m % 8 % 4};
  }
  const core::PartWidths widths{{100, 4}, {101, 4}, {102, 4}, {103, 4}};
  const Pairs pairs = quickPairs(kMembers, 3, 1);
  // per round: how many pairs use each directed cable (leaf, spine, up?) at most
  const auto mostOnACable = [](const Pairs& round) {
    std::map<std::tuple<int, int, bool>, int> use;
    int most = 0;
    for (const auto& [a, b] : round) {
      if (a / 8 == b / 8) continue;
      for (const auto& [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
        most = std::max({most, ++use[{from / 8, to % 4, true}], ++use[{to / 8, to % 4, false}]});
      }
    }
    return most;
  };
  const auto laned = core::packRounds(pairs, claims, widths, lanes);
  std::multiset<std::pair<int, int>> seen;
  for (const auto& r : laned) {
    expectDisjoint(r);
    EXPECT_EQ(mostOnACable(r), 1);
    seen.insert(r.begin(), r.end());
  }
  const std::multiset<std::pair<int, int>> want(pairs.begin(), pairs.end());
  EXPECT_EQ(seen, want);
  int shared = 0;
  for (const auto& r : core::packRounds(pairs, claims, widths)) shared += mostOnACable(r) > 1;
  EXPECT_GT(shared, 0);
  // two pairs whose ends have the same lanes meet in two rounds; swapped lanes share one
  const std::vector<std::vector<int>> two{{10}, {10}, {10}, {10}, {11}, {11}, {11}, {11}};
  const std::vector<std::vector<int>> twoLanes{{0}, {1}, {0}, {1}, {0}, {1}, {0}, {1}};
  EXPECT_EQ(core::packRounds({{0, 4}, {2, 6}}, two, {{10, 2}, {11, 2}}, twoLanes).size(), 2u);
  EXPECT_EQ(core::packRounds({{0, 5}, {1, 4}}, two, {{10, 2}, {11, 2}}, twoLanes).size(), 1u);
}

TEST(QuickMode, EveryMemberMeetsEnoughPeersDeterministically) {
  for (int n : {2, 3, 4, 9, 64, 1000}) {
    const Pairs pairs = quickPairs(n, 3, 1);
    EXPECT_EQ(pairs, quickPairs(n, 3, 1)) << "not deterministic";
    std::vector<int> degree(static_cast<std::size_t>(n), 0);
    for (const auto& [a, b] : pairs) {
      EXPECT_LT(a, b);
      ++degree[static_cast<std::size_t>(a)];
      ++degree[static_cast<std::size_t>(b)];
    }
    for (int d : degree) EXPECT_GE(d, std::min(3, n - 1)) << "n=" << n;
    EXPECT_LE(pairs.size(), static_cast<std::size_t>(3 * n));
    EXPECT_TRUE(std::is_sorted(pairs.begin(), pairs.end()));
  }
  EXPECT_NE(quickPairs(64, 3, 1), quickPairs(64, 3, 2));
}

std::vector<core::HostProbe> probes(int ranks) {
  // (built whole: assigning a short literal to each trips GCC 12's false -Wrestrict)
  return std::vector<core::HostProbe>(static_cast<std::size_t>(ranks), core::HostProbe{.hostname = std::string("h")});
}

RunConfig pairwiseConfig(std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"--pairwise", "--pair-bytes", "1M", "--pair-iters", "4"};
  args.insert(args.end(), extra.begin(), extra.end());
  return parseRunOptions(args).config;
}

TEST(PairPlan, FullModeRanksThenNodes) {
  const core::Topology t = topologies::buildTopology(probes(6), 2);  // 3 nodes of 2 ranks
  const core::Plan plan = makePlan(pairwiseConfig(), t);
  EXPECT_TRUE(plan.collectiveSteps.empty());
  ASSERT_EQ(plan.pairSteps.size(), 5u + 3u);  // 6 ranks: 5 rounds; 3 nodes: 3 rounds
  for (std::size_t i = 0; i < plan.pairSteps.size(); ++i) {
    const core::PairStep& s = plan.pairSteps[i];
    EXPECT_EQ(s.index, static_cast<int>(i));
    EXPECT_EQ(s.level, i < 5 ? core::PairLevel::kRank : core::PairLevel::kNode);
    EXPECT_EQ(s.bytes, 1u << 20);
    EXPECT_EQ(s.window, 64);  // osu_bw's window
    EXPECT_EQ(s.warmup, 2);   // osu_bw's skip above 8 KiB
    EXPECT_EQ(s.iters, 4);
    EXPECT_EQ(s.sample, 0);
  }
  EXPECT_EQ(core::pairsOf(plan.pairSteps[6]).size(), 1u);  // 3 nodes: one pair, one bye
}

// Untimed windows before each stream are osu_bw's skip: 10 up to 8 KiB messages, 2 above.
TEST(PairPlan, WarmUpIsOsuBwsSkip) {
  const core::Topology t = topologies::buildTopology(probes(2), 2);
  for (const auto& [bytes, warmup] : {std::pair{"8K", 10}, std::pair{"8200", 2}, std::pair{"16M", 2}}) {
    const core::Plan plan = makePlan(parseRunOptions({"--pairwise", "--pair-bytes", bytes}).config, t);
    ASSERT_FALSE(plan.pairSteps.empty());
    EXPECT_EQ(plan.pairSteps[0].warmup, warmup) << bytes;
  }
}

TEST(PairPlan, OneRankPerNodeMeasuresNoNodeLevel) {
  const core::Plan plan = makePlan(pairwiseConfig(), topologies::buildTopology(probes(4), 1));
  EXPECT_EQ(plan.pairSteps.size(), 3u);
  for (const auto& s : plan.pairSteps) EXPECT_EQ(s.level, core::PairLevel::kRank);
}

TEST(PairPlan, CollectivesComeFirstAndRetestsLast) {
  RunConfig c = pairwiseConfig();
  c.collectives = true;
  c.ops = {core::Op::kAllReduce};
  c.minBytes = c.maxBytes = 1024;
  core::Plan plan = makePlan(c, topologies::buildTopology(probes(4), 0));
  const int collectives = static_cast<int>(plan.collectiveSteps.size());
  ASSERT_GT(collectives, 0);
  EXPECT_EQ(plan.pairSteps.front().index, collectives);
  const int before = plan.stepCount();
  planRetests(c, core::PairLevel::kRank, 4, {{0, 1}, {1, 2}, {2, 3}}, plan, 1);
  planRetests(c, core::PairLevel::kRank, 4, {{0, 1}, {1, 2}, {2, 3}}, plan, 2);
  // a few suspects are retested alone: 3 rounds of one pair, each sample
  ASSERT_EQ(plan.stepCount(), before + 6);
  EXPECT_EQ(plan.pairSteps.back().index, before + 5);
  EXPECT_EQ(plan.pairSteps.back().sample, 2);
  EXPECT_EQ(plan.pairSteps[plan.pairSteps.size() - 6].sample, 1);
  for (std::size_t i = plan.pairSteps.size() - 6; i < plan.pairSteps.size(); ++i) {
    EXPECT_EQ(plan.pairSteps[i].pairs.size(), 1u);
  }
}

// Beyond kIsolatedRetests suspects, retests are packed into rounds of disjoint pairs.
TEST(PairPlan, ManyRetestsArePacked) {
  core::Plan plan;
  std::vector<std::pair<int, int>> pairs;
  for (int a = 0; a < 400; a += 2) pairs.emplace_back(a, a + 1);  // 200 disjoint pairs
  ASSERT_GT(pairs.size(), kIsolatedRetests);
  planRetests(pairwiseConfig({"--retests", "1"}), core::PairLevel::kRank, 400, pairs, plan, 1);
  ASSERT_EQ(plan.pairSteps.size(), 1u);
  EXPECT_EQ(plan.pairSteps[0].pairs.size(), 200u);
}

// A retest's pair met in its round: one warm window above 8 KiB (the round's two were for the
// connection), small messages keep osu_bw's ten.
TEST(PairPlan, ARetestWarmsLargeMessagesWithOneWindow) {
  for (const auto& [bytes, warmup] : {std::pair{"64K", 1}, std::pair{"8K", 10}}) {
    RunConfig c = pairwiseConfig();
    c.pairBytes = core::parseBytes(bytes, "size");
    core::Plan plan;
    planRetests(c, core::PairLevel::kRank, 4, {{0, 1}}, plan, 1);
    ASSERT_EQ(plan.pairSteps.size(), 1u);
    EXPECT_EQ(plan.pairSteps[0].warmup, warmup) << bytes;
  }
}

// A few suspects are packed too where the claims keep them off each other's uplinks and no two
// nodes are one machine: on two leaves of four, the pairs inside the leaves share a round, the two
// across the leaves' uplinks take one each. Nodes sharing a machine, or no fabric, keep them alone.
TEST(PairPlan, AFewRetestsArePackedOnSeparateMachinesWhereTheFabricIsKnown) {
  const std::vector<std::vector<int>> leaves{{10}, {10}, {10}, {10}, {11}, {11}, {11}, {11}};
  const Pairs pairs{{0, 1}, {0, 4}, {1, 5}, {2, 3}, {4, 5}, {6, 7}};
  const auto rounds = [&](const std::vector<std::vector<int>>& claims, bool apart) {
    core::Plan plan;
    planRetests(pairwiseConfig({"--retests", "1"}), core::PairLevel::kNode, 8, pairs, plan, 1, claims, apart);
    std::size_t measured = 0;
    for (const auto& step : plan.pairSteps) measured += step.pairs.size();
    EXPECT_EQ(measured, pairs.size());
    return plan.pairSteps.size();
  };
  EXPECT_EQ(rounds(leaves, true), 3u);
  EXPECT_EQ(rounds(leaves, false), pairs.size());
  EXPECT_EQ(rounds({}, true), pairs.size());
}

// Many suspects with no fabric known: each sample packs from another starting pair, so that a
// pair meets other neighbours (and other cables) in its second retest.
TEST(PairPlan, EachRetestSampleMeetsOtherNeighbours) {
  core::Plan plan;
  std::vector<std::pair<int, int>> pairs;
  for (int a = 0; a < 40; ++a) {
    for (int b = a + 1; b < 40; b += 7) pairs.emplace_back(a, b);
  }
  ASSERT_GT(pairs.size(), kIsolatedRetests);
  for (int sample : {1, 2}) planRetests(pairwiseConfig(), core::PairLevel::kRank, 40, pairs, plan, sample);
  std::map<std::pair<int, int>, std::vector<std::set<std::pair<int, int>>>> roundOf;
  for (const auto& step : plan.pairSteps) {
    for (const auto& p : step.pairs) roundOf[p].emplace_back(step.pairs.begin(), step.pairs.end());
  }
  int same = 0;
  for (const auto& p : pairs) {
    ASSERT_EQ(roundOf[p].size(), 2u);  // --retests 2: once in each sample
    same += roundOf[p][0] == roundOf[p][1] ? 1 : 0;
  }
  EXPECT_LT(same, static_cast<int>(pairs.size()) / 4);
}

// Quick mode's second round around a suspect pair 1-6 on two leaves of four: 1's leafmates meet 6,
// 6's leafmates meet 1, the nearest after each first; pairs measured already are left out; the
// limit holds; without a fabric every member is a neighbour.
// A node whose every pair lies far below is measured again in kRetestSample of them, the others
// wait; a suspect not far below is always measured, and counts for no sample.
TEST(RetestSample, AMemberFarBelowIsMeasuredInASample) {
  std::vector<std::pair<int, int>> suspects{{2, 3}};
  for (int peer = 1; peer <= 10; ++peer) suspects.emplace_back(0, peer);
  std::sort(suspects.begin(), suspects.end());
  std::vector<std::pair<int, int>> far(suspects.begin(), suspects.end() - 1);  // all of node 0's
  const RetestSample s = sampleRetests(suspects, far);
  const std::vector<std::pair<int, int>> sample{{0, 1}, {0, 2}, {0, 3}, {0, 4}};
  ASSERT_EQ(static_cast<int>(sample.size()), kRetestSample);
  std::vector<std::pair<int, int>> measured = sample;
  measured.emplace_back(2, 3);
  EXPECT_EQ(s.measured, measured);
  EXPECT_EQ(s.waiting, (std::vector<std::pair<int, int>>{{0, 5}, {0, 6}, {0, 7}, {0, 8}, {0, 9}, {0, 10}}));
  EXPECT_EQ(s.samples.size(), 1u);  // nodes 1..4 are in one far pair each: no full sample
  EXPECT_EQ(s.samples.at(0), sample);
  const auto level = [](int, int) { return 0.4; };
  // every retest of the sample as far below: the waiting pairs are settled by it
  EXPECT_TRUE(unsettled(s, settledLevels(s, sample, level), level).empty());
  // one of them cleared: the cause may not be node 0's, the waiting pairs are measured too
  EXPECT_EQ(unsettled(s, settledLevels(s, {{0, 1}, {0, 2}, {0, 4}}, level), level), s.waiting);
  // a waiting pair over kSettleSpread deeper than the sample met another on the slow part, one
  // as much shallower has another cause: both are measured
  const auto apart = [](int, int b) { return b == 5 ? 0.1 : b == 6 ? 1.0 : 0.4; };
  EXPECT_EQ(unsettled(s, settledLevels(s, sample, apart), apart),
            (std::vector<std::pair<int, int>>{{0, 5}, {0, 6}}));
}

// A waiting pair is settled by either end's sample: a pair between two far-below nodes waits for
// both once both samples are full, and either confirming settles it.
TEST(RetestSample, EitherEndsSampleSettlesAWaitingPair) {
  std::vector<std::pair<int, int>> suspects;
  for (int peer = 2; peer <= 5; ++peer) suspects.emplace_back(0, peer);
  for (int peer = 2; peer <= 5; ++peer) suspects.emplace_back(1, peer);
  suspects.emplace_back(0, 1);
  std::sort(suspects.begin(), suspects.end());
  const RetestSample s = sampleRetests(suspects, suspects);
  EXPECT_EQ(s.waiting, (std::vector<std::pair<int, int>>{{0, 5}, {1, 5}}));  // (0, 1) came early: sampled
  const auto level = [](int, int) { return 0.4; };
  // node 1 confirmed
  EXPECT_EQ(unsettled(s, settledLevels(s, s.samples.at(1), level), level), (std::vector<std::pair<int, int>>{{0, 5}}));
}

// A holder an earlier retest settled (quick mode's first retests, before its second round) is
// sampled no more: its far-below pairs all wait, and settle at its level; one over kSettleSpread
// deeper is measured.
TEST(RetestSample, AHolderSettledBeforeSettlesTheNextRetestsPairs) {
  const Pairs suspects{{0, 1}, {0, 2}, {0, 3}, {4, 5}};
  const SettledLevels before{{SampleHolder{0}, 0.4}};
  const RetestSample s = sampleRetests(suspects, suspects, nullptr, before);
  EXPECT_EQ(s.measured, (Pairs{{4, 5}}));
  EXPECT_EQ(s.waiting, (Pairs{{0, 1}, {0, 2}, {0, 3}}));
  EXPECT_TRUE(s.samples.empty());
  const auto depth = [](int, int b) { return b == 3 ? 0.1 : 0.4; };
  EXPECT_EQ(unsettled(s, before, depth), (Pairs{{0, 3}}));
  EXPECT_EQ(unsettled(s, {}, depth), s.waiting);
}

// A cable at 1% puts its far-below pairs on many nodes, one or two each, where no member's sample
// fills: two leaves of 8 with 2 cables up (lane: position modulo 2), every pair from leaf 10 to
// a lane-1 node of leaf 11 far below. With the lanes known, the cable up from leaf 10 (and down
// into leaf 11) holds kRetestSample of them in the retests and the rest wait, settled by the
// sample; without them every pair is measured again.
TEST(RetestSample, ALaneCableFarBelowIsMeasuredInASample) {
  std::vector<std::vector<int>> claims;
  std::vector<std::vector<int>> lanes;
  for (int m = 0; m < 16; ++m) {
    claims.push_back({m < 8 ? 10 : 11});
    lanes.push_back({m % 2});
  }
  const core::LaneCables cables(claims, lanes);
  std::vector<std::pair<int, int>> suspects;
  for (int a = 0; a < 8; ++a) suspects.emplace_back(a, 9 + 2 * (a % 4));
  std::sort(suspects.begin(), suspects.end());
  EXPECT_TRUE(sampleRetests(suspects, suspects).waiting.empty());
  const RetestSample s = sampleRetests(suspects, suspects, &cables);
  EXPECT_EQ(s.measured, (std::vector<std::pair<int, int>>{{0, 9}, {1, 11}, {2, 13}, {3, 15}}));
  EXPECT_EQ(s.waiting, (std::vector<std::pair<int, int>>{{4, 9}, {5, 11}, {6, 13}, {7, 15}}));
  const SampleHolder up = core::LaneCable{10, 1, 1};
  const SampleHolder down = core::LaneCable{11, 0, 1};
  ASSERT_EQ(s.samples.count(up), 1u);
  EXPECT_EQ(s.samples.at(up), s.measured);
  EXPECT_EQ(s.samples.at(down), s.measured);
  const auto level = [](int, int) { return 0.01; };
  EXPECT_TRUE(unsettled(s, settledLevels(s, s.measured, level), level, &cables).empty());
  EXPECT_EQ(unsettled(s, settledLevels(s, s.measured, level), level), s.waiting);  // no member's sample settles them
  // one of the sample cleared: the waiting pairs are measured too
  EXPECT_EQ(unsettled(s, settledLevels(s, {{0, 9}, {1, 11}, {2, 13}}, level), level, &cables), s.waiting);
}

TEST(PairPlan, TheSecondQuickRoundMeetsTheSuspectsNeighbours) {
  const std::vector<std::vector<int>> leaves{{10}, {10}, {10}, {10}, {11}, {11}, {11}, {11}};
  const auto none = [](int, int) { return false; };
  EXPECT_EQ(widenedPairs({{1, 6}}, leaves, 8, 2, 100, none), (Pairs{{1, 4}, {1, 7}, {2, 6}, {3, 6}}));
  const auto measured = [](int a, int b) { return a == 2 && b == 6; };
  EXPECT_EQ(widenedPairs({{1, 6}}, leaves, 8, 2, 100, measured), (Pairs{{0, 6}, {1, 4}, {1, 7}, {3, 6}}));
  EXPECT_EQ(widenedPairs({{1, 6}, {0, 5}}, leaves, 8, 2, 3, none).size(), 3u);
  EXPECT_EQ(widenedPairs({{1, 6}}, {}, 8, 2, 100, none), (Pairs{{0, 1}, {1, 7}, {2, 6}, {3, 6}}));
}

// A quick run measures the second round as first measurements (sample 0), in rounds of disjoint
// pairs.
TEST(PairPlan, TheSecondQuickRoundIsFirstMeasurements) {
  core::Plan plan;
  const core::Topology t = topologies::buildTopology(probes(16), 2);  // 8 nodes of 2 ranks
  planWidening(pairwiseConfig({"--pairwise-mode", "quick"}), t, core::PairLevel::kNode, {{0, 4}, {1, 5}, {2, 3}, {0, 7}},
               {}, plan);
  ASSERT_EQ(plan.pairSteps.size(), 2u);
  for (const auto& step : plan.pairSteps) {
    EXPECT_EQ(step.sample, 0);
    EXPECT_EQ(step.level, core::PairLevel::kNode);
    expectDisjoint(step.pairs);
  }
}

TEST(PairPlan, QuickMode) {
  const core::Plan plan = makePlan(pairwiseConfig({"--pairwise-mode", "quick", "--pairwise-peers", "2"}),
                                   topologies::buildTopology(probes(32), 0));
  std::set<std::pair<int, int>> seen;
  for (const auto& s : plan.pairSteps) {
    expectDisjoint(s.pairs);
    seen.insert(s.pairs.begin(), s.pairs.end());
  }
  EXPECT_EQ(seen.size(), quickPairs(32, 2, 1).size());
  EXPECT_LT(plan.pairSteps.size(), 31u);  // fewer rounds than the full matrix
}

// A 2:1 fabric (4 leaves of 8 nodes, 4 cables up each): a round sends at most four pairs across
// each leaf, so no uplink carries two of them on average; every pair is still measured. Without
// the fabric some round sends more.
TEST(PairPlan, RoundsCrossALeafNoMoreOftenThanItHasCablesUp) {
  std::vector<core::HostProbe> hosts;
  for (int r = 0; r < 32; ++r) {
    core::HostProbe p{.hostname = std::string("node") + std::to_string(r)};
    hosts.push_back(p);
  }
  const core::Topology t = topologies::buildTopology(hosts, 1);
  FabricClaims claims;
  for (int x = 0; x < 32; ++x) claims.nodes.push_back({100 + x / 8});
  for (int leaf = 0; leaf < 4; ++leaf) claims.widths[100 + leaf] = 4;
  const RunConfig config = pairwiseConfig({"--pairwise-mode", "quick"});
  const auto busiestLeaf = [](const core::Plan& plan) {
    int busiest = 0;
    for (const auto& step : plan.pairSteps) {
      std::map<int, int> across;
      for (const auto& [a, b] : step.pairs) {
        if (a / 8 != b / 8) busiest = std::max({busiest, ++across[a / 8], ++across[b / 8]});
      }
    }
    return busiest;
  };
  const core::Plan packed = makePlan(config, t, claims);
  EXPECT_EQ(busiestLeaf(packed), 4);
  std::set<std::pair<int, int>> seen;
  for (const auto& s : packed.pairSteps) seen.insert(s.pairs.begin(), s.pairs.end());
  EXPECT_EQ(seen.size(), quickPairs(32, config.pairwisePeers, 1).size());
  EXPECT_GT(busiestLeaf(makePlan(config, t)), 4);
  // full mode: each circle round in parts that keep to the cables, every pair once
  const RunConfig full = pairwiseConfig();
  const core::Plan parts = makePlan(full, t, claims);
  EXPECT_EQ(busiestLeaf(parts), 4);
  std::multiset<std::pair<int, int>> once;
  for (const auto& s : parts.pairSteps) {
    const auto pairs = core::pairsOf(s);
    expectDisjoint(pairs);
    once.insert(pairs.begin(), pairs.end());
  }
  EXPECT_EQ(once.size(), 32u * 31u / 2u);
  const std::set<std::pair<int, int>> distinct(once.begin(), once.end());
  EXPECT_EQ(distinct.size(), once.size());
  EXPECT_GT(parts.pairSteps.size(), 31u);
  EXPECT_EQ(parts.pairSteps[0].part, 1);
  EXPECT_NE(describe(parts, parts.pairSteps[0]).find("round 1/31 part 1"), std::string::npos)
      << describe(parts, parts.pairSteps[0]);
  EXPECT_EQ(makePlan(full, t).pairSteps.size(), 31u);  // without the fabric: the circle's rounds whole
}

TEST(PairPlan, PairwiseNeedsTwoRanks) {
  EXPECT_THROW(makePlan(pairwiseConfig(), topologies::buildTopology(probes(1), 0)), core::UsageError);
}

core::PairRecord sample(const char* level, int a, int b, double ab, double ba, double lat) {
  core::PairRecord r;
  r.level = level;
  r.a = a;
  r.b = b;
  r.bwAB = ab;
  r.bwBA = ba;
  r.bwBidir = ab + ba;
  r.latencyUs = lat;
  return r;
}

TEST(Matrices, BestAndWorstSamplesDerivedNodesAndMedians) {
  const core::Topology t = topologies::buildTopology(probes(4), 2);  // nodes {0,1}, {2,3}
  MatrixBuilder b(t, matrixShapeOf(pairwiseConfig()));
  b.add(sample("rank", 0, 2, 10, 20, 5));
  b.add(sample("rank", 1, 3, 30, 40, 7));
  b.add(sample("rank", 0, 1, 100, 100, 1));
  EXPECT_EQ(b.build().rankUnidirWorst.n, 0);  // no retest yet: no worst samples kept
  core::PairRecord retest = sample("rank", 0, 2, 12, 16, 4);
  retest.sample = 1;
  b.add(retest);
  const core::Matrices m = b.build();
  EXPECT_FLOAT_EQ(m.rankUnidir.at(0, 2), 12);
  EXPECT_FLOAT_EQ(m.rankUnidirWorst.at(0, 2), 10);
  EXPECT_FLOAT_EQ(m.rankUnidir.at(2, 0), 20);
  EXPECT_FLOAT_EQ(m.rankUnidirWorst.at(2, 0), 16);
  EXPECT_FLOAT_EQ(m.rankLatency.at(0, 2), 4);
  EXPECT_FLOAT_EQ(m.rankLatencyWorst.at(2, 0), 5);
  EXPECT_FLOAT_EQ(m.rankBidir.at(2, 0), 30);
  EXPECT_TRUE(std::isnan(m.rankUnidir.at(0, 3)));
  EXPECT_EQ(m.rankLinkClass.at(0, 1), core::LinkClass::kSameNodeHost);
  EXPECT_EQ(m.rankLinkClass.at(0, 2), core::LinkClass::kInterNode);
  EXPECT_EQ(m.rankLinkClass.at(3, 3), core::LinkClass::kSelf);
  // node matrix not measured: the median of the measured rank pairs between the nodes
  EXPECT_FALSE(m.nodeMeasured);
  EXPECT_FLOAT_EQ(m.nodeBw.at(0, 1), 30);  // of 12 and 30, the better
  EXPECT_FLOAT_EQ(m.nodeBw.at(1, 0), 40);  // of 20 and 40
  EXPECT_FLOAT_EQ(m.nodeLatency.at(0, 1), 4);  // of 4 and 7, the lower
  // rank 0 sent 12, 100 and received 20, 100: of the middle two (20, 100), the better
  EXPECT_FLOAT_EQ(m.rankPeerMedian[0], 100);
  // a measured node pair replaces the derived matrix
  b.add(sample("node", 0, 1, 50, 60, 3));
  const core::Matrices n = b.build();
  EXPECT_TRUE(n.nodeMeasured);
  EXPECT_FLOAT_EQ(n.nodeBw.at(0, 1), 50);
  EXPECT_FLOAT_EQ(n.nodeLatency.at(1, 0), 3);
}

// Quick mode keeps only the measured cells (16,384 ranks must not cost R x R), and everything
// built from them (link classes, peer medians, node figures, findings, the file, JSON) is what the
// same cells give in a dense matrix.
TEST(Matrices, QuickModeIsSparseAndEqualToTheDenseEquivalent) {
  const core::Topology t = topologies::buildTopology(probes(24), 3);  // 8 nodes of 3 ranks
  const RunConfig quick = pairwiseConfig({"--pairwise-mode", "quick"});
  MatrixBuilder sparse(t, matrixShapeOf(quick));
  MatrixBuilder dense(t, matrixShapeOf(pairwiseConfig()));
  std::set<std::pair<int, int>> measured;
  for (const core::PairStep& step : makePlan(quick, t).pairSteps) {
    if (step.level != core::PairLevel::kRank) continue;
    for (const auto& [a, b] : core::pairsOf(step)) {
      // node 7 (ranks 21-23) a tenth of everyone else's 10 GB/s; jitter by pair
      const double slow = a >= 21 || b >= 21 ? 0.1 : 1.0;
      const auto s = sample("rank", a, b, (10 + a % 3) * slow, (10 + b % 5) * slow, 5 + a % 2);
      sparse.add(s);
      dense.add(s);
      measured.emplace(std::min(a, b), std::max(a, b));
    }
  }
  const core::Matrices ms = sparse.build();
  const core::Matrices md = dense.build();
  ASSERT_TRUE(ms.rankUnidir.sparse);
  ASSERT_FALSE(md.rankUnidir.sparse);
  EXPECT_EQ(ms.rankUnidir.cells.size(), 2 * measured.size());
  EXPECT_LT(measured.size(), 24u * 23u / 2u);  // quick mode: not every pair
  for (int a = 0; a < 24; ++a) {
    EXPECT_EQ(ms.rankPeerMedian[static_cast<std::size_t>(a)], md.rankPeerMedian[static_cast<std::size_t>(a)]) << a;
    for (int b = 0; b < 24; ++b) {
      const float x = ms.rankUnidir.at(a, b);
      const float y = md.rankUnidir.at(a, b);
      EXPECT_TRUE(x == y || (std::isnan(x) && std::isnan(y))) << a << "," << b;
      EXPECT_EQ(ms.rankLinkClass.at(a, b), md.rankLinkClass.at(a, b));
    }
  }
  ASSERT_TRUE(ms.nodeBw.sparse);
  for (int x = 0; x < 8; ++x) {
    for (int y = 0; y < 8; ++y) {
      const float p = ms.nodeBw.at(x, y);
      const float q = md.nodeBw.at(x, y);
      EXPECT_TRUE(p == q || (std::isnan(p) && std::isnan(q))) << x << "," << y;
    }
  }
  const auto fs = analyze(ms, t, AnalysisConfig{});
  const auto fd = analyze(md, t, AnalysisConfig{});
  ASSERT_EQ(fs.size(), fd.size());
  for (std::size_t i = 0; i < fs.size(); ++i) EXPECT_EQ(fs[i].message, fd[i].message);
  ASSERT_FALSE(fs.empty());
  EXPECT_EQ(fs[0].kind, core::FindingKind::kNode);
  EXPECT_EQ(fs[0].nodeA, 7);

  // the file stores the measured cells and reads back sparse, equal, with the same classes
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("fabricmap-quick-" + std::to_string(getpid()) + ".h5")).string();
  {
    results::H5Sink sink(path);
    core::Provenance p;
    p.worldSize = 24;
    sink.begin(p, t, {});
    sink.analysis(ms, fs);
    sink.finish(true);
  }
  const results::ResultsFile f = results::readResults(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(f.matrices.rankUnidir.sparse);
  EXPECT_EQ(f.matrices.rankUnidir.n, 24);
  EXPECT_EQ(f.matrices.rankUnidir.cells, ms.rankUnidir.cells);
  EXPECT_EQ(f.matrices.nodeBw.cells, ms.nodeBw.cells);
  EXPECT_EQ(f.matrices.rankLatency.cells, ms.rankLatency.cells);
  for (const auto& [a, b] : measured) EXPECT_EQ(f.matrices.rankLinkClass.at(a, b), ms.rankLinkClass.at(a, b));
  const auto j = results::toJson(f);
  EXPECT_EQ(j["matrices"]["rank"]["bw_unidir"]["n"], 24);
  EXPECT_EQ(j["matrices"]["rank"]["bw_unidir"]["cells"].size(), 2 * measured.size());
  EXPECT_EQ(j["matrices"]["rank"]["link_class"]["cells"].size(), 2 * measured.size());
}

}  // namespace
}  // namespace fabricmap::orchestrator
