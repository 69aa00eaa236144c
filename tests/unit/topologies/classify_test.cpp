// Classification of synthetic topologies (every class and edge case), and the nearest NIC of each
// GPU with the GPUDirect warning.
#include <gtest/gtest.h>

#include "tests/unit/topologies/topo_support.h"

namespace fabricmap::topologies {
namespace {

TEST(TopoClassify, TwoGpuBridgeIsAPair) {
  const Classification c = classifyText({.gpus = 2, .code = all("NV4")});
  EXPECT_EQ(c.topologyClass, TopologyClass::kNvLinkPairs);
  EXPECT_EQ(c.nvlinkGroups, (std::vector<std::vector<int>>{{0, 1}}));
  EXPECT_EQ(c.nvswitch, Tristate::kUnknown);
  EXPECT_EQ(classifyText({.gpus = 2, .code = all("PHB")}).topologyClass, TopologyClass::kPcieOnly);
}

TEST(TopoClassify, TwoGpusBehindASwitchNvmlReports) {
  GpuTopology topo = parseSmiTopo(smiText({.gpus = 2, .code = all("NV18")}));
  topo.nvswitch = Tristate::kYes;  // as NVML would say in a 2-GPU slice of an HGX node
  EXPECT_EQ(classify(topo).topologyClass, TopologyClass::kFullNvSwitch);
}

TEST(TopoClassify, FourGpuDirectMesh) {
  for (const std::string code : {"NV4", "NV6"}) {
    const Classification c = classifyText({.gpus = 4, .code = all(code)});
    EXPECT_EQ(c.topologyClass, TopologyClass::kNvLinkDirectMesh) << code;
    EXPECT_FALSE(c.degraded);
  }
}

TEST(TopoClassify, OddGpuCounts) {
  // 3 GPUs, all pairs NVLink: a mesh of 3
  EXPECT_EQ(classifyText({.gpus = 3, .code = all("NV2")}).topologyClass,
            TopologyClass::kNvLinkDirectMesh);
  // 5 GPUs: two bridged pairs and one GPU alone
  const Classification c = classifyText({.gpus = 5, .code = [](int a, int b) {
                                           return a / 2 == b / 2 && a < 4 && b < 4 ? "NV4" : "NODE";
                                         }});
  EXPECT_EQ(c.topologyClass, TopologyClass::kNvLinkPairs);
  EXPECT_EQ(c.nvlinkGroups, (std::vector<std::vector<int>>{{0, 1}, {2, 3}}));
  EXPECT_TRUE(anyContains(c.warnings, "GPU4 without an NVLink partner"));
  // 7 GPUs behind a switch (NV12 to 6 peers = 72 links) is still a full switch
  EXPECT_EQ(classifyText({.gpus = 7, .code = all("NV12")}).topologyClass,
            TopologyClass::kFullNvSwitch);
}

TEST(TopoClassify, EightGpuNvSwitch) {
  const Classification c = classifyText({.gpus = 8, .code = all("NV12")});
  EXPECT_EQ(c.topologyClass, TopologyClass::kFullNvSwitch);
  EXPECT_EQ(c.nvswitch, Tristate::kYes);
  EXPECT_FALSE(c.degraded);
}

TEST(TopoClassify, NvSwitchNodeWithOneGpusLinksDownIsADegradedPartialMesh) {
  const Classification c = classifyText(
      {.gpus = 8, .code = [](int a, int b) { return a == 7 || b == 7 ? "SYS" : "NV18"; }});
  EXPECT_EQ(c.topologyClass, TopologyClass::kNvLinkPartialMesh);
  EXPECT_EQ(c.nvswitch, Tristate::kYes);
  EXPECT_TRUE(c.degraded);
  EXPECT_TRUE(anyContains(c.warnings, "GPU7 without NVLink to 7 of 7 peers"));
  EXPECT_EQ(c.nvlinkGroups, (std::vector<std::vector<int>>{{0, 1, 2, 3, 4, 5, 6}}));
}

TEST(TopoClassify, NvSwitchNodeWithFewerLinksOnOneGpuIsFullButDegraded) {
  const Classification c = classifyText(
      {.gpus = 8, .code = [](int a, int b) { return a == 3 || b == 3 ? "NV12" : "NV18"; }});
  EXPECT_EQ(c.topologyClass, TopologyClass::kFullNvSwitch);
  EXPECT_TRUE(c.degraded);
  EXPECT_TRUE(anyContains(c.warnings, "GPU3 with fewer than NV18 to 7 of 7 peers"))
      << c.warnings.back();
}

TEST(TopoClassify, PairsAndCliquesInsideEight) {
  const Classification pairs = classifyText(
      {.gpus = 8, .code = [](int a, int b) { return a / 2 == b / 2 ? "NV4" : "SYS"; }});
  EXPECT_EQ(pairs.topologyClass, TopologyClass::kNvLinkPairs);
  EXPECT_EQ(pairs.nvlinkGroups.size(), 4u);
  // one clique of 4 (3 x NV6 = 18 fits a GPU: bridges, not a switch), four GPUs on PCIe only
  const Classification clique = classifyText(
      {.gpus = 8, .code = [](int a, int b) { return a < 4 && b < 4 ? "NV6" : "PHB"; }});
  EXPECT_EQ(clique.topologyClass, TopologyClass::kNvLinkPairs);
  EXPECT_EQ(clique.nvlinkGroups, (std::vector<std::vector<int>>{{0, 1, 2, 3}}));
  EXPECT_TRUE(anyContains(clique.warnings, "GPU4, GPU5, GPU6, GPU7 without an NVLink partner"));
  // two cliques of 4
  EXPECT_EQ(
      classifyText({.gpus = 8, .code = [](int a, int b) { return a / 4 == b / 4 ? "NV6" : "SYS"; }})
          .topologyClass,
      TopologyClass::kNvLinkPairs);
}

TEST(TopoClassify, PartialMeshes) {
  // a ring of 4 without the diagonals: connected, not complete, not cliques
  const Classification ring = classifyText(
      {.gpus = 4, .code = [](int a, int b) { return (a + b) % 2 == 1 ? "NV2" : "PHB"; }});
  EXPECT_EQ(ring.topologyClass, TopologyClass::kNvLinkPartialMesh);
  EXPECT_NE(ring.summary.find("connected"), std::string::npos);
  // a chain 0-1-2
  const Classification chain =
      classifyText({.gpus = 3, .code = [](int a, int b) {
                      return (a == 0 && b == 2) || (a == 2 && b == 0) ? "SYS" : "NV1";
                    }});
  EXPECT_EQ(chain.topologyClass, TopologyClass::kNvLinkPartialMesh);
  EXPECT_FALSE(chain.degraded);
}

TEST(TopoClassify, PcieOnlyWithEveryPathKind) {
  // 0-1 PIX, 0-2 PXB, 0-3 SYS, 1-2 PHB, 1-3 NODE, 2-3 SYS
  const std::map<std::pair<int, int>, std::string> codes = {{{0, 1}, "PIX"},  {{0, 2}, "PXB"},
                                                            {{0, 3}, "SYS"},  {{1, 2}, "PHB"},
                                                            {{1, 3}, "NODE"}, {{2, 3}, "SYS"}};
  const auto code = [&codes](int a, int b) { return codes.at({std::min(a, b), std::max(a, b)}); };
  const GpuTopology topo = parseSmiTopo(smiText({.gpus = 4, .code = code}));
  EXPECT_EQ(topo.gpuLinks[0][1].kind, LinkKind::kPix);
  EXPECT_EQ(topo.gpuLinks[2][0].kind, LinkKind::kPxb);
  EXPECT_EQ(topo.gpuLinks[1][2].kind, LinkKind::kPhb);
  EXPECT_EQ(topo.gpuLinks[3][1].kind, LinkKind::kNode);
  EXPECT_EQ(topo.gpuLinks[2][3].kind, LinkKind::kSys);
  EXPECT_EQ(classify(topo).topologyClass, TopologyClass::kPcieOnly);
}

TEST(TopoClassify, SingleAndNoGpu) {
  const GpuTopology one = parseSmiTopo(smiText({.gpus = 1, .code = all("X")}));
  EXPECT_EQ(one.gpuCount(), 1);
  EXPECT_EQ(one.gpus[0].cpuAffinity, "0-31");
  EXPECT_EQ(classify(one).topologyClass, TopologyClass::kSingleGpu);
  EXPECT_EQ(classify(makeTopology(0, 0)).topologyClass, TopologyClass::kNoGpu);
  // a matrix of NICs only (nothing else nvidia-smi could print without GPUs)
  const GpuTopology none =
      parseSmiTopo(smiText({.gpus = 0, .code = all("X"), .nics = {"NIC0", "NIC1"}}));
  EXPECT_EQ(none.gpuCount(), 0);
  EXPECT_EQ(none.nics.size(), 2u);
  EXPECT_EQ(classify(none).topologyClass, TopologyClass::kNoGpu);
}

TEST(TopoClassify, KnownModelsNarrowTheSwitchBound) {
  // NV6 to each of 3 peers: 18 links. An unknown GPU might have 18 (a direct mesh); a V100 has 6,
  // so the same counts need a switch (DGX-2 style).
  GpuTopology topo = parseSmiTopo(smiText({.gpus = 4, .code = all("NV6")}));
  EXPECT_EQ(classify(topo).topologyClass, TopologyClass::kNvLinkDirectMesh);
  for (GpuInfo& gpu : topo.gpus) gpu.name = "Tesla V100-SXM3-32GB";
  const Classification v100 = classify(topo);
  EXPECT_EQ(v100.linkBound, 6);
  EXPECT_EQ(v100.topologyClass, TopologyClass::kFullNvSwitch);
  // mixed models fall back to the largest bound
  topo.gpus[0].name = "NVIDIA H100 80GB HBM3";
  EXPECT_EQ(classify(topo).linkBound, 18);
}

TEST(TopoClassify, P2pUnknownAndInactiveLinksAreReported) {
  GpuTopology topo = parseSmiTopo(smiText({.gpus = 2, .code = all("PHB")}));
  topo.gpuLinks[0][1].p2p = topo.gpuLinks[1][0].p2p = Tristate::kNo;
  topo.gpus[1].nvlinksInactive = 4;
  const Classification c = classify(topo);
  EXPECT_TRUE(anyContains(c.warnings, "no CUDA peer-to-peer access between GPU0-GPU1"));
  EXPECT_TRUE(anyContains(c.warnings, "GPU1 has 4 NVLink(s) that are not active"));
}

TEST(TopoClassify, ClassNamesRoundTrip) {
  for (const std::string name : {"FULL_NVSWITCH", "NVLINK_DIRECT_MESH", "NVLINK_PAIRS",
                                 "NVLINK_PARTIAL_MESH", "PCIE_ONLY", "SINGLE_GPU", "NO_GPU"}) {
    ASSERT_TRUE(classFromName(name).has_value()) << name;
    EXPECT_EQ(className(*classFromName(name)), name);
  }
  EXPECT_FALSE(classFromName("FULL_NVLINK_SWITCH").has_value());
}

// ---------------------------------------------------------------- nearest NIC

TEST(TopoNearestNic, BestPathThenFasterNicThenLowerIndex) {
  GpuTopology topo = makeTopology(2, 4);
  for (int n = 0; n < 4; ++n) {
    topo.nics[n].name = fmt::format("mlx5_{}", n);
    topo.nics[n].rdma = true;
  }
  topo.nics[1].rateGbps = 200;
  topo.nics[2].rateGbps = 400;
  topo.gpuNic[0] = {LinkKind::kSys, LinkKind::kPxb, LinkKind::kPxb, LinkKind::kPix};
  topo.gpuNic[1] = {LinkKind::kNode, LinkKind::kPxb, LinkKind::kPxb, LinkKind::kSys};
  EXPECT_EQ(nearestNic(topo, 0).nic, 3);
  EXPECT_TRUE(nearestNic(topo, 0).gpuDirect);
  EXPECT_EQ(nearestNic(topo, 1).nic, 2);  // PXB ties: the 400G NIC
  EXPECT_EQ(nearestNic(topo, 1).path, LinkKind::kPxb);
  topo.nics[2].rateGbps = 200;
  EXPECT_EQ(nearestNic(topo, 1).nic, 1);  // full tie: lower index
  topo.gpuNic[1].assign(4, LinkKind::kUnknown);
  EXPECT_EQ(nearestNic(topo, 1).nic, -1);  // distances unknown: no NIC is named
}

TEST(TopoNearestNic, PlainEthernetIsNotAGpuDirectNic) {
  GpuTopology topo = makeTopology(1, 2);
  topo.nics[0].name = "eno1";
  topo.nics[0].rateGbps = 1;
  topo.nics[0].linkLayer = LinkLayer::kEthernet;
  topo.nics[1].name = "mlx5_0";
  topo.nics[1].rateGbps = 200;
  topo.nics[1].rdma = true;
  topo.gpuNic[0] = {LinkKind::kPix, LinkKind::kSys};
  EXPECT_EQ(nearestNic(topo, 0).nic, 1);
  EXPECT_FALSE(nearestNic(topo, 0).gpuDirect);
  topo.nics[1].rdma = false;  // no RDMA NIC at all: no nearest NIC, no GPUDirect warning
  EXPECT_EQ(nearestNic(topo, 0).nic, -1);
  EXPECT_FALSE(anyContains(classify(topo).warnings, "GPUDirect"));
}

TEST(TopoNearestNic, GpuDirectWarningOnlyAcrossTheCpu) {
  for (const auto& [code, warn] : std::vector<std::pair<std::string, bool>>{
           {"PIX", false}, {"PXB", false}, {"PHB", true}, {"NODE", true}, {"SYS", true}}) {
    const Classification c = classifyText({.gpus = 2,
                                           .code = all("NV4"),
                                           .nics = {"NIC0"},
                                           .nicCode = all(code),
                                           .legend = {"mlx5_0"}});
    EXPECT_EQ(anyContains(c.warnings, "GPUDirect RDMA would cross the CPU"), warn) << code;
    EXPECT_EQ(c.nearestNics[1].gpuDirect, !warn) << code;
  }
}

}  // namespace
}  // namespace fabricmap::topologies
