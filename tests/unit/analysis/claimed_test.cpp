// Claimed versus measured inside a node: the GPU links a node reports set the expected figure of
// each GPU pair, and a pair or a node that does not move what its links promise is named.
#include <gtest/gtest.h>

#include "tests/unit/analysis/analysis_support.h"

namespace fabricmap::orchestrator {
namespace {

const auto kNv18 = [](int, int) { return std::string("NV18"); };

TEST(ClaimedVsMeasured, GpuLinkClassesComeFromTheNodesLinks) {
  const GpuNode n = gpuNode(4, [](int a, int b) { return (a ^ b) == 1 ? "NV4" : "SYS"; }, "NVLINK_PAIRS", "no",
                            [](int, int) { return 50.0; });
  EXPECT_EQ(n.m.rankLinkClass.at(0, 1), core::LinkClass::kNvlink);
  EXPECT_EQ(n.m.rankLinkClass.at(0, 2), core::LinkClass::kPcie);
  const GpuNode s = gpuNode(4, kNv18, "FULL_NVSWITCH", "yes", [](int, int) { return 380.0; });
  EXPECT_EQ(s.m.rankLinkClass.at(2, 3), core::LinkClass::kNvswitch);
}

TEST(ClaimedVsMeasured, RecognisedGpusSetTheExpectedFigure) {
  const GpuNode s = gpuNode(4, kNv18, "FULL_NVSWITCH", "yes", [](int, int) { return 380.0; });
  const auto& e = s.m.classExpected[static_cast<std::size_t>(core::LinkClass::kNvswitch)];
  EXPECT_DOUBLE_EQ(e.bandwidth, kPracticalShare * 450.0);  // H100 SXM: NVLink4, 450 GB/s a direction
  EXPECT_EQ(s.m.classExpectedFrom[static_cast<std::size_t>(core::LinkClass::kNvswitch)], "H100 SXM");
  EXPECT_TRUE(serious(analyze(s.m, s.topology, kDefaults)).empty());
  // the whole node at 150 GB/s: the population looks uniform, the spec says otherwise
  const GpuNode slow = gpuNode(4, kNv18, "FULL_NVSWITCH", "yes", [](int, int) { return 150.0; });
  const auto found = ofKind(analyze(slow.m, slow.topology, kDefaults), "intra_node");
  ASSERT_EQ(found.size(), 1u) << describe(analyze(slow.m, slow.topology, kDefaults));
  EXPECT_NEAR(found[0].ratio, 150.0 / 360.0, 1e-6);
  // unknown models: the measured population is the baseline
  const GpuNode unknown = gpuNode(4, kNv18, "FULL_NVSWITCH", "yes", [](int, int) { return 150.0; }, "Mystery GPU");
  EXPECT_TRUE(unknown.m.classExpectedFrom[static_cast<std::size_t>(core::LinkClass::kNvswitch)].empty());
  EXPECT_TRUE(serious(analyze(unknown.m, unknown.topology, kDefaults)).empty());
}

TEST(ClaimedVsMeasured, AnNvLinkPairAtPcieSpeedIsNamed) {
  const GpuNode n = gpuNode(8, kNv18, "FULL_NVSWITCH", "yes", [](int a, int b) {
    return (a == 0 && b == 4) || (a == 4 && b == 0) ? 24.0 : 380.0;
  });
  const auto found = ofKind(analyze(n.m, n.topology, kDefaults), "claimed_vs_measured");
  ASSERT_EQ(found.size(), 1u) << describe(analyze(n.m, n.topology, kDefaults));
  EXPECT_EQ(found[0].subject, "gpu01 GPU0-GPU4");
  EXPECT_EQ(found[0].severity, core::Severity::kError);
  EXPECT_NE(found[0].message.find("GPU0-GPU4 reported NV18 but measured 24.00 GB/s"), std::string::npos)
      << found[0].message;
}

TEST(ClaimedVsMeasured, AnNvSwitchNodeThatBehavesLikeBridgedPairs) {
  const GpuNode n = gpuNode(8, kNv18, "FULL_NVSWITCH", "yes",
                            [](int a, int b) { return (a ^ b) == 1 ? 100.0 : 70.0; });
  const auto found = ofKind(analyze(n.m, n.topology, kDefaults), "claimed_vs_measured");
  bool bridged = false;
  for (const auto& f : found) bridged = bridged || f.message.find("one fast partner") != std::string::npos;
  EXPECT_FALSE(bridged) << "70 vs 100 GB/s is not one fast partner";
  const GpuNode pairs = gpuNode(8, kNv18, "FULL_NVSWITCH", "yes",
                                [](int a, int b) { return (a ^ b) == 1 ? 100.0 : 20.0; });
  const auto all = analyze(pairs.m, pairs.topology, kDefaults);
  bridged = false;
  for (const auto& f : ofKind(all, "claimed_vs_measured")) {
    bridged = bridged || f.message.find("behaves like NVLink-bridged pairs") != std::string::npos;
  }
  EXPECT_TRUE(bridged) << describe(all);
}

TEST(ClaimedVsMeasured, ClassesOtherThanNvSwitchAreSaidPlainly) {
  const GpuNode n = gpuNode(4, [](int a, int b) { return (a ^ b) == 1 ? "NV4" : "SYS"; }, "NVLINK_PAIRS", "no",
                            [](int a, int b) { return (a ^ b) == 1 ? 50.0 : 10.0; }, "NVIDIA RTX A6000");
  const auto found = ofKind(analyze(n.m, n.topology, kDefaults), "topology");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, core::Severity::kWarning);
  EXPECT_NE(found[0].message.find("gpu01 is NVLINK_PAIRS: NVLink only within pairs"), std::string::npos)
      << found[0].message;
}

}  // namespace
}  // namespace fabricmap::orchestrator
