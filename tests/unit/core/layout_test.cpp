// Parallel layouts: parsing, validation and the groups of every kind, checked against hand-computed
// groups and, over many layouts, the properties every layout must have.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "core/error.h"
#include "core/layout.h"

namespace fabricmap::core {
namespace {

using Groups = std::vector<std::vector<int>>;

TEST(Layout, ParsesKeysInAnyOrderWithDefaults) {
  const Layout l = parseLayout("dp=2,tp=4");
  EXPECT_EQ(l.tp, 4);
  EXPECT_EQ(l.pp, 1);
  EXPECT_EQ(l.dp, 2);
  EXPECT_EQ(l.ep, 1);
  EXPECT_EQ(formatLayout(parseLayout("tp=2,pp=2,dp=2,ep=2")), "tp=2,pp=2,dp=2,ep=2");
  for (const char* bad : {"", "tp=2,", "tp", "tp=0", "tp=-2", "tp=2x", "tq=2", "tp=2,tp=4", "tp=99999999999"}) {
    EXPECT_THROW(parseLayout(bad), UsageError) << bad;
  }
}

TEST(Layout, MustMultiplyToTheWorldAndSplitDataGroupsEvenly) {
  EXPECT_EQ(layoutProblem(parseLayout("tp=2,pp=2,dp=2"), 8), "");
  EXPECT_EQ(layoutProblem(parseLayout("tp=4,dp=2"), 6), "tp x pp x dp = 4 x 1 x 2 = 8, but the job has 6 ranks");
  EXPECT_NE(layoutProblem(parseLayout("dp=6,ep=4"), 6).find("ep=4 does not divide dp=6"), std::string::npos);
}

TEST(Layout, MegatronOrderTensorInnermostThenPipelineThenData) {
  const Layout l = parseLayout("tp=2,pp=2,dp=2");
  EXPECT_EQ(groupsOf(l, Parallelism::kTensor), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(groupsOf(l, Parallelism::kPipeline), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(groupsOf(l, Parallelism::kData), (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  const LayoutPlace p = placeOf(l, 6);  // dp 1, pp 1, tp 0
  EXPECT_EQ(p.tpIndex, 0);
  EXPECT_EQ(p.ppIndex, 1);
  EXPECT_EQ(p.dpIndex, 1);
  EXPECT_EQ(p.tpGroup, 3);
  EXPECT_EQ(p.ppGroup, 2);
  EXPECT_EQ(p.dpGroup, 2);

  const Layout wide = parseLayout("tp=4,dp=2");
  EXPECT_EQ(groupsOf(wide, Parallelism::kTensor), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(groupsOf(wide, Parallelism::kData), (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(groupsOf(wide, Parallelism::kPipeline).size(), 8u);  // one stage: every rank alone
}

TEST(Layout, ExpertGroupsSplitEachDataGroup) {
  EXPECT_EQ(groupsOf(parseLayout("dp=8,ep=4"), Parallelism::kExpert), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  const Layout l = parseLayout("tp=2,dp=4,ep=2");  // DP groups {0,2,4,6} and {1,3,5,7}
  EXPECT_EQ(groupsOf(l, Parallelism::kExpert), (Groups{{0, 2}, {4, 6}, {1, 3}, {5, 7}}));
  EXPECT_EQ(placeOf(l, 5).epGroup, 3);
  EXPECT_EQ(placeOf(l, 5).epIndex, 0);
}

// Every layout of up to 64 ranks: each kind's groups cover every rank once, have the size of
// their dimension, and agree with placeOf; a TP group is consecutive ranks.
TEST(Layout, EveryLayoutPartitionsTheRanks) {
  int checked = 0;
  for (int tp = 1; tp <= 8; tp *= 2) {
    for (int pp = 1; pp <= 4; ++pp) {
      for (int dp = 1; dp <= 4; ++dp) {
        for (int ep = 1; ep <= dp; ++ep) {
          if (dp % ep != 0) continue;
          const Layout l{tp, pp, dp, ep};
          ASSERT_EQ(layoutProblem(l, tp * pp * dp), "");
          for (Parallelism kind : {Parallelism::kTensor, Parallelism::kPipeline, Parallelism::kData, Parallelism::kExpert}) {
            const int size = kind == Parallelism::kTensor     ? tp
                             : kind == Parallelism::kPipeline ? pp
                             : kind == Parallelism::kData     ? dp
                                                              : ep;
            std::multiset<int> seen;
            const Groups groups = groupsOf(l, kind);
            for (std::size_t g = 0; g < groups.size(); ++g) {
              ASSERT_EQ(static_cast<int>(groups[g].size()), size) << formatLayout(l) << " " << name(kind);
              for (std::size_t i = 0; i < groups[g].size(); ++i) {
                const int r = groups[g][i];
                seen.insert(r);
                const LayoutPlace p = placeOf(l, r);
                const int group = kind == Parallelism::kTensor     ? p.tpGroup
                                  : kind == Parallelism::kPipeline ? p.ppGroup
                                  : kind == Parallelism::kData     ? p.dpGroup
                                                                   : p.epGroup;
                EXPECT_EQ(group, static_cast<int>(g));
                if (kind == Parallelism::kTensor) {
                  EXPECT_EQ(r, groups[g][0] + static_cast<int>(i));
                }
              }
            }
            ASSERT_EQ(static_cast<int>(seen.size()), l.worldSize());
            for (int r = 0; r < l.worldSize(); ++r) ASSERT_EQ(seen.count(r), 1u) << formatLayout(l);
          }
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 50);
}

Topology nodesOfSizes(const std::vector<int>& sizes) {
  Topology t;
  int rank = 0;
  for (std::size_t n = 0; n < sizes.size(); ++n) {
    for (int i = 0; i < sizes[n]; ++i) {
      RankRecord r;
      r.rank = rank++;
      r.node = static_cast<int>(n);
      r.localRank = i;
      t.ranks.push_back(r);
    }
  }
  return t;
}

TEST(Layout, TensorGroupsCrossingNodesAreFound) {
  const Topology even = nodesOfSizes({4, 4});
  EXPECT_TRUE(tpGroupsCrossingNodes(parseLayout("tp=4,dp=2"), even).empty());
  EXPECT_EQ(tpGroupsCrossingNodes(parseLayout("tp=8"), even), (std::vector<int>{0}));
  const Topology uneven = nodesOfSizes({3, 5});  // TP pairs {0,1} {2,3} {4,5} {6,7}
  EXPECT_EQ(tpGroupsCrossingNodes(parseLayout("tp=2,dp=4"), uneven), (std::vector<int>{1}));
  EXPECT_EQ(tpGroupsCrossingNodes(parseLayout("tp=4,dp=2"), uneven), (std::vector<int>{0}));
}

}  // namespace
}  // namespace fabricmap::core
