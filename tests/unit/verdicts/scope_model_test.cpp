// One scope model for one node: a one-node file's world rows answer what a verdict asks of intra;
// a file of several nodes, or one that measured intra itself, is taken as it is.
#include "orchestrator/verdicts/scope_model.h"

#include <gtest/gtest.h>

#include <string>

namespace fabricmap::orchestrator {
namespace {

results::ResultsFile withNodes(int nodes, int perNode) {
  results::ResultsFile f;
  for (int n = 0; n < nodes; ++n) {
    core::NodeRecord node;
    node.node = n;
    node.ranks = perNode;
    f.topology.nodes.push_back(node);
    for (int l = 0; l < perNode; ++l) {
      core::RankRecord r;
      r.rank = n * perNode + l;
      r.node = n;
      f.topology.ranks.push_back(r);
    }
  }
  return f;
}

core::CollectiveRecord row(const std::string& scope, std::uint64_t bytes) {
  core::CollectiveRecord r;
  r.scope = scope;
  r.op = "all_reduce";
  r.bytes = bytes;
  r.busbw = r.busbwMedian = 235;
  return r;
}

TEST(ScopeModel, OneNodesWorldAnswersIntra) {
  results::ResultsFile f = withNodes(1, 8);
  f.collectives = {row("world", 1024), row("world", 2048)};
  EXPECT_TRUE(isOneNode(f.topology));
  EXPECT_EQ(answeringScope(f, "intra"), "world");
  EXPECT_EQ(answeringScope(f, "world"), "world");
  EXPECT_EQ(answeringScope(f, "inter"), "inter");
  const auto rows = judgedCollectives(f);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[2].scope, "intra");
  EXPECT_EQ(rows[3].bytes, 2048u);
}

TEST(ScopeModel, SeveralNodesOrAnIntraOfItsOwnAreTakenAsTheyAre) {
  results::ResultsFile f = withNodes(2, 4);
  f.collectives = {row("world", 1024)};
  EXPECT_FALSE(isOneNode(f.topology));
  EXPECT_EQ(answeringScope(f, "intra"), "intra");
  EXPECT_EQ(judgedCollectives(f).size(), 1u);

  results::ResultsFile own = withNodes(1, 8);
  own.collectives = {row("world", 1024), row("intra", 1024)};
  EXPECT_EQ(answeringScope(own, "intra"), "intra");
  EXPECT_EQ(judgedCollectives(own).size(), 2u);

  // a file without ranks is no node at all
  results::ResultsFile none;
  EXPECT_FALSE(isOneNode(none.topology));
}

}  // namespace
}  // namespace fabricmap::orchestrator
