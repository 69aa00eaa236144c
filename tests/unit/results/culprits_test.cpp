// Findings folded by culprit: one rank corrupting its output is one culprit however many groups
// it spoiled; the worst figure, count and confidence of each; the console summary of a run and of
// `show` prints one line per culprit with its evidence folded under it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "results/console.h"
#include "results/culprits.h"

namespace fabricmap::results {
namespace {

// Two nodes of four ranks: gpu-a holds ranks 0-3, gpu-b ranks 4-7.
core::Topology twoNodes() {
  core::Topology t;
  for (int n = 0; n < 2; ++n) {
    core::NodeRecord node;
    node.node = n;
    node.name = n == 0 ? "gpu-a" : "gpu-b";
    node.hostname = node.name;
    node.ranks = 4;
    t.nodes.push_back(node);
  }
  for (int r = 0; r < 8; ++r) {
    core::RankRecord rec;
    rec.rank = r;
    rec.node = r / 4;
    rec.hostname = r < 4 ? "gpu-a" : "gpu-b";
    t.ranks.push_back(rec);
  }
  return t;
}

core::Finding corruption(const std::string& subject, double wrong, const std::string& what) {
  core::Finding f;
  f.severity = core::Severity::kError;
  f.kind = core::FindingKind::kDataCorruption;
  f.subject = subject;
  f.measured = wrong;
  f.unit = "elements";
  f.message = fmt::format("{}: {} wrong elements on {}", what, wrong, subject);
  return f;
}

core::Finding finding(const char* severity, const char* kind, const char* subject, double measured, double expected,
                      const char* unit, double confidence, const char* message) {
  core::Finding f;
  f.severity = core::parseSeverity(severity).value();
  f.kind = core::parseFindingKind(kind).value();
  f.subject = subject;
  f.measured = measured;
  f.expected = expected;
  f.ratio = expected > 0 ? measured / expected : 0;
  f.unit = unit;
  f.confidence = confidence;
  f.message = message;
  return f;
}

// What a run with rank 5 corrupting every all_reduce output leaves: 30 groups where only rank 5
// got wrong data, 4 intra-node groups where ranks 4-5 both did, 2 pairs with rank 5 at one end
// (36 rows); then a slow node, a link's latency found twice, and information.
std::vector<core::Finding> corruptedRun() {
  std::vector<core::Finding> out;
  out.push_back(finding("info", "oversubscribed", "gpu-a", 8, 4, "ranks/CPUs", 1, "gpu-a runs 8 ranks on 4 CPUs"));
  for (int i = 0; i < 30; ++i) {
    out.push_back(corruption("rank 5 (gpu-b)", i == 11 ? 17 : 1 + i % 2, fmt::format("all_reduce step {}", i)));
  }
  for (int i = 0; i < 4; ++i) out.push_back(corruption("ranks 4-5 (gpu-b)", 2, fmt::format("intra all_reduce {}", i)));
  out.push_back(corruption("rank 5 <-> rank 1 (gpu-b, gpu-a)", 3, "pair 5-1"));
  out.push_back(corruption("rank 2 <-> rank 5 (gpu-a, gpu-b)", 3, "pair 2-5"));
  out.push_back(finding("warning", "link_latency", "gpu-a <-> gpu-b", 12, 4, "us", 0.6, "latency 12 us"));
  out.push_back(finding("error", "node", "gpu-a", 40, 360, "GB/s", 0.87, "gpu-a is slow: check its NIC"));
  out.push_back(finding("warning", "link_latency", "gpu-a <-> gpu-b", 20, 4, "us", 0.7, "latency 20 us"));
  out.push_back(finding("info", "rank", "rank 6 on gpu-b", 30, 45, "GB/s", 0.31, "rank 6 slow, low confidence"));
  return out;
}

TEST(Culprits, OneRankCorruptingEveryGroupIsOneCulprit) {
  const std::vector<Culprit> c = groupCulprits(corruptedRun(), twoNodes());
  ASSERT_EQ(c.size(), 5u);
  // errors first (wrong data has no baseline: it stands below any slow figure), then warnings, notes
  EXPECT_EQ(c[0].kind, core::FindingKind::kDataCorruption);
  EXPECT_EQ(c[0].subject, "rank 5 (gpu-b)");
  EXPECT_EQ(c[0].count(), 36u);
  EXPECT_EQ(c[0].worst().measured, 17);  // the most wrong elements of one row
  EXPECT_EQ(c[0].worst().message, "all_reduce step 11: 17 wrong elements on rank 5 (gpu-b)");
  EXPECT_EQ(c[1].kind, core::FindingKind::kNode);
  EXPECT_EQ(c[1].count(), 1u);
  EXPECT_DOUBLE_EQ(c[1].confidence, 0.87);
  EXPECT_EQ(c[2].kind, core::FindingKind::kLinkLatency);
  EXPECT_EQ(c[2].severity, core::Severity::kWarning);
  EXPECT_EQ(c[2].count(), 2u);
  EXPECT_EQ(c[2].worst().measured, 20);  // latency: the highest
  EXPECT_DOUBLE_EQ(c[2].confidence, 0.7);  // the group's highest
  // notes: 2x oversubscribed stands at 0.5 of its bar, the slow rank at 0.67
  EXPECT_EQ(c[3].kind, core::FindingKind::kOversubscribed);
  EXPECT_EQ(c[4].kind, core::FindingKind::kRank);
  EXPECT_EQ(c[4].severity, core::Severity::kInfo);
}

TEST(Culprits, WorstFigureFollowsTheUnit) {
  std::vector<core::Finding> rows{finding("warning", "link", "a -> b", 30, 45, "GB/s", 0.9, "30"),
                                  finding("error", "link", "a -> b", 10, 45, "GB/s", 0.8, "10"),
                                  finding("warning", "link", "a -> b", 20, 45, "GB/s", 0.95, "20")};
  std::vector<Culprit> c = groupCulprits(rows, {});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].severity, core::Severity::kError);       // the worst of the group
  EXPECT_EQ(c[0].worst().measured, 10);    // bandwidth: the lowest ratio
  EXPECT_DOUBLE_EQ(c[0].confidence, 0.95);
  EXPECT_EQ(c[0].evidence[1].measured, 20);  // evidence worst first
  EXPECT_EQ(figureText(c[0].worst()), "10.00 GB/s = 0.22x of 45.00 GB/s");
  EXPECT_EQ(figureText(corruption("rank 1 (x)", 12, "")), "12 elements");
  EXPECT_EQ(figureText(finding("error", "node", "n", 0.0119, 0.5987, "GB/s", 1, "")), "11.9 MB/s = 0.02x of 598.7 MB/s");
  EXPECT_EQ(figureText(finding("info", "noisy", "3 pairs", 3, 0, "", 1, "")), "");
  EXPECT_TRUE(higherIsBetter("GB/s"));
  EXPECT_TRUE(higherIsBetter("efficiency"));
  EXPECT_FALSE(higherIsBetter("us"));
  EXPECT_FALSE(higherIsBetter("ranks/CPUs"));
  EXPECT_DOUBLE_EQ(standing(finding("warning", "link_latency", "x", 8, 4, "us", 1, "")), 0.5);
  EXPECT_TRUE(std::isnan(standing(finding("warning", "layout", "x", NAN, 0, "groups", 1, ""))));
}

TEST(Culprits, CorruptionThatPointsAtNoOneRankKeepsItsSubjects) {
  // one corrupted pair: either end may be at fault
  std::vector<Culprit> c = groupCulprits({corruption("rank 1 <-> rank 2 (gpu-a)", 4, "pair")}, twoNodes());
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].subject, "rank 1 <-> rank 2 (gpu-a)");
  // a group whose ranks all got wrong data, and a node pair: their subjects
  c = groupCulprits({corruption("ranks 0-3 (gpu-a)", 4, "world"), corruption("ranks 0-3 (gpu-a)", 5, "world"),
                     corruption("gpu-a <-> gpu-b", 1, "node pair")},
                    twoNodes());
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].subject, "ranks 0-3 (gpu-a)");
  EXPECT_EQ(c[0].count(), 2u);
  EXPECT_EQ(c[1].subject, "gpu-a <-> gpu-b");
}

TEST(Culprits, TwoCorruptingRanksAreTwoCulprits) {
  // ranks 1 and 6 each spoil their own output; a pair test between them names both; one pair of
  // two healthy-looking ranks is undecided
  std::vector<core::Finding> rows;
  for (int i = 0; i < 5; ++i) rows.push_back(corruption("rank 1 (gpu-a)", 1, "a"));
  for (int i = 0; i < 3; ++i) rows.push_back(corruption("rank 6 (gpu-b)", 1, "b"));
  rows.push_back(corruption("rank 1 <-> rank 6 (gpu-a, gpu-b)", 1, "pair 1-6"));
  rows.push_back(corruption("rank 0 <-> rank 7 (gpu-a, gpu-b)", 1, "pair 0-7"));
  const std::vector<Culprit> c = groupCulprits(rows, twoNodes());
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].subject, "rank 1 (gpu-a)");  // named by 6 rows, rank 6 by 4: the shared pair is rank 1's
  EXPECT_EQ(c[0].count(), 6u);
  EXPECT_EQ(c[1].subject, "rank 6 (gpu-b)");
  EXPECT_EQ(c[1].count(), 3u);
  EXPECT_EQ(c[2].subject, "rank 0 <-> rank 7 (gpu-a, gpu-b)");  // one row each: either end
  // a charged rank no row names alone is named from the topology
  const std::vector<Culprit> pairs = groupCulprits({corruption("rank 2 <-> rank 5 (gpu-a, gpu-b)", 1, "x"),
                                                    corruption("rank 5 <-> rank 3 (gpu-b, gpu-a)", 1, "y")},
                                                   twoNodes());
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].subject, "rank 5 (gpu-b)");
  EXPECT_EQ(pairs[0].count(), 2u);
}

std::string consoleOf(const std::function<void(ConsoleSink&)>& feed) {
  std::FILE* out = std::tmpfile();
  {
    ConsoleSink sink(out);
    feed(sink);
  }
  std::rewind(out);
  std::string text(1 << 16, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), out));
  std::fclose(out);
  return text;
}

std::size_t linesStarting(const std::string& text, const std::string& prefix) {
  std::size_t n = 0;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    n += text.compare(at, prefix.size(), prefix) == 0;
    at = end + 1;
  }
  return n;
}

core::Provenance provenance() {
  core::Provenance p;
  p.worldSize = 8;
  p.nodeCount = 2;
  return p;
}

TEST(Console, AnalysisSummaryIsOneLinePerCulprit) {
  const std::string text = consoleOf([](ConsoleSink& s) {
    s.begin(provenance(), twoNodes(), {});
    s.analysis(core::Matrices{}, corruptedRun());
  });
  const std::string expected =
      "# Bottlenecks (3 culprits from 39 findings):\n"
      "#   ERROR   data_corruption rank 5 (gpu-b): 36 findings, worst 17 elements, confidence 1.00\n"
      "#             all_reduce step 11: 17 wrong elements on rank 5 (gpu-b)\n"
      "#             pair 5-1: 3 wrong elements on rank 5 <-> rank 1 (gpu-b, gpu-a)\n"
      "#             pair 2-5: 3 wrong elements on rank 2 <-> rank 5 (gpu-a, gpu-b)\n"
      "#             ... and 33 more\n"
      "#   ERROR   node gpu-a: 1 finding, 40.00 GB/s = 0.11x of 360.00 GB/s, confidence 0.87\n"
      "#             gpu-a is slow: check its NIC\n"
      "#   WARNING link_latency gpu-a <-> gpu-b: 2 findings, worst 20 us = 5.00x of 4 us, confidence 0.70\n"
      "#             latency 20 us\n"
      "#             latency 12 us\n"
      "#   note    oversubscribed gpu-a: 1 finding, 8 ranks/CPUs = 2.00x of 4 ranks/CPUs, confidence 1.00\n"
      "#             gpu-a runs 8 ranks on 4 CPUs\n"
      "#   note    rank rank 6 on gpu-b: 1 finding, 30.00 GB/s = 0.67x of 45.00 GB/s, confidence 0.31\n"
      "#             rank 6 slow, low confidence\n";
  EXPECT_NE(text.find(expected), std::string::npos) << text;
}

// A live run: wrong data is said once per subject as found, then summarised by culprit with the
// analysis's findings (the sink gets them through finding(), not analysis()).
TEST(Console, RunFindingsJoinTheSummaryOnce) {
  const std::vector<core::Finding> rows = corruptedRun();
  const std::string text = consoleOf([&](ConsoleSink& s) {
    s.begin(provenance(), twoNodes(), {});
    std::vector<core::Finding> analysed;
    for (const auto& f : rows) {
      if (f.kind == core::FindingKind::kDataCorruption) {
        s.finding(f);
      } else {
        analysed.push_back(f);
      }
    }
    s.analysis(core::Matrices{}, analysed);
    s.finish(true);
  });
  EXPECT_EQ(linesStarting(text, "# DATA CORRUPTION (rank 5 (gpu-b)): "), 1u) << text;
  EXPECT_EQ(linesStarting(text, "# DATA CORRUPTION ("), 4u) << text;  // 4 distinct subjects
  EXPECT_EQ(linesStarting(text, "# Bottlenecks"), 1u) << text;
  EXPECT_EQ(linesStarting(text, "#   ERROR   data_corruption "), 1u) << text;
  EXPECT_NE(text.find("#   ERROR   data_corruption rank 5 (gpu-b): 36 findings, worst 17 elements"), std::string::npos)
      << text;
  EXPECT_NE(text.find("#   ERROR   node gpu-a: 1 finding"), std::string::npos) << text;
}

// Without pairs the analysis never runs: the run's findings are summarised as the run ends, and
// `show` of such a file prints the same summary without the notices of a live run.
TEST(Console, RunWithoutAnalysisSummarisesAtTheEnd) {
  std::vector<core::Finding> rows;
  for (int i = 0; i < 36; ++i) rows.push_back(corruption("rank 3 (gpu-a)", 1, fmt::format("all_reduce {}", i)));
  const std::string live = consoleOf([&](ConsoleSink& s) {
    s.begin(provenance(), twoNodes(), {});
    for (const auto& f : rows) s.finding(f);
    s.finish(true);
  });
  EXPECT_EQ(linesStarting(live, "# DATA CORRUPTION"), 1u) << live;
  EXPECT_NE(live.find("# Bottlenecks (1 culprit from 36 findings):\n"
                      "#   ERROR   data_corruption rank 3 (gpu-a): 36 findings, worst 1 elements, confidence 1.00\n"
                      "#             all_reduce 0: 1 wrong elements on rank 3 (gpu-a)\n"),
            std::string::npos)
      << live;
  EXPECT_NE(live.find("#             ... and 33 more\n# Out of bounds"), std::string::npos) << live;

  ResultsFile file;
  file.complete = true;
  file.topology = twoNodes();
  file.findings = rows;
  std::FILE* out = std::tmpfile();
  printResults(out, file);
  std::rewind(out);
  std::string shown(1 << 16, '\0');
  shown.resize(std::fread(shown.data(), 1, shown.size(), out));
  std::fclose(out);
  EXPECT_EQ(linesStarting(shown, "# DATA CORRUPTION"), 0u) << shown;
  EXPECT_EQ(linesStarting(shown, "#   ERROR   "), 1u) << shown;
  EXPECT_NE(shown.find("data_corruption rank 3 (gpu-a): 36 findings"), std::string::npos) << shown;
}

}  // namespace
}  // namespace fabricmap::results
