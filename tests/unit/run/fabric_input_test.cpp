// show/report --fabric: a file's node matrix judged again with the fabric's topology; what the run
// found as it measured stays; a file without a node matrix, or a fabric naming none of its nodes,
// is refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "orchestrator/analysis/analysis.h"
#include "orchestrator/run/fabric_input.h"
#include "tests/unit/analysis/analysis_support.h"

namespace fabricmap::orchestrator {
namespace {

namespace fs = std::filesystem;

std::string written(const std::string& name, const std::string& text) {
  const fs::path path = fs::temp_directory_path() / ("fabricmap-fabric-input-" + name);
  std::ofstream(path) << text;
  return path.string();
}

// host2 and host3 (one leaf of four, two spines) slow with everyone but each other, as the run
// recorded it: the node rule named both; and wrong data the run found as it measured.
results::ResultsFile recordedRun() {
  const Fabric f = fabric(8, 1, 64, [](core::Matrices& m, const core::Topology&) {
    for (int a = 0; a < 8; ++a) {
      for (int b = 0; b < 8; ++b) {
        if (a != b && (a / 2 == 1) != (b / 2 == 1)) setBw(m, a, b, 0.02f);
      }
    }
  });
  results::ResultsFile file;
  file.path = "run.h5";
  file.topology = f.topology;
  file.matrices = f.m;
  file.hasMatrices = true;
  file.findings = analyze(f.m, f.topology, kDefaults);
  core::Finding wrong;
  wrong.severity = core::Severity::kError;
  wrong.kind = core::FindingKind::kDataCorruption;
  wrong.subject = "rank 1 (host1)";
  file.findings.push_back(wrong);
  return file;
}

std::string twoSpines() {
  std::string text;
  for (int h = 0; h < 8; ++h) text += "host" + std::to_string(h) + " -> leaf" + std::to_string(h / 2) + "\n";
  for (int leaf = 0; leaf < 4; ++leaf) {
    for (int s = 0; s < 2; ++s) text += "leaf" + std::to_string(leaf) + " -> spine" + std::to_string(s) + "\n";
  }
  return text;
}

TEST(JudgeWithFabric, TheLeafsUplinksReplaceItsNodesAndWhatTheRunFoundStays) {
  results::ResultsFile file = recordedRun();
  ASSERT_EQ(ofKindIn(serious(file.findings), "node"), 2) << describe(file.findings);
  judgeWithFabric(file, written("two-spines.txt", twoSpines()));
  const auto found = serious(file.findings);
  EXPECT_EQ(ofKindIn(found, "node"), 0) << describe(found);
  EXPECT_EQ(ofKindIn(found, "uplink"), 1) << describe(found);
  EXPECT_EQ(ofKindIn(found, "data_corruption"), 1) << describe(found);
  EXPECT_EQ(found.size(), 2u) << describe(found);
  EXPECT_EQ(file.topology.fabric.devices.size(), 8u + 6u);
}

TEST(JudgeWithFabric, RefusesAFileWithoutANodeMatrixOrAFabricOfOtherHosts) {
  results::ResultsFile file = recordedRun();
  EXPECT_THROW(judgeWithFabric(file, written("elsewhere.txt", "other0 -> leaf0\nother1 -> leaf0\n")), core::UsageError);
  EXPECT_THROW(judgeWithFabric(file, written("absent-dir/none.txt", "")), core::UsageError);
  const auto refusal = [&](results::ResultsFile f) {
    try {
      judgeWithFabric(f, written("two-spines.txt", twoSpines()));
    } catch (const core::UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  results::ResultsFile oneNode = file;
  oneNode.matrices.nodeBw.n = 1;  // pairs measured inside one node: no fabric between nodes to judge
  EXPECT_NE(refusal(oneNode).find("measured pairs inside one node"), std::string::npos) << refusal(oneNode);
  file.matrices.pairsMeasured = false;
  EXPECT_NE(refusal(file).find("measured no pairs"), std::string::npos) << refusal(file);
}

}  // namespace
}  // namespace fabricmap::orchestrator
