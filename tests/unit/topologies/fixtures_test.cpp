// Real `nvidia-smi topo -m` outputs (tests/data/topo) parse and classify to their labels.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/unit/topologies/topo_support.h"

namespace fabricmap::topologies {
namespace {

TEST(TopoFixtures, EveryFixtureParsesAndClassifiesToItsLabel) {
  const auto labels = readLabels();
  ASSERT_EQ(labels.size(), 5u);
  for (const auto& row : labels) {
    SCOPED_TRACE(row.at("file"));
    const GpuTopology topo = fixture(row.at("file"));
    const Classification c = classify(topo);
    EXPECT_EQ(className(c.topologyClass), row.at("class"));
    EXPECT_EQ(topo.gpuCount(), std::stoi(row.at("num_gpus")));
    EXPECT_EQ(static_cast<int>(topo.nics.size()), std::stoi(row.at("nic_rows")));
    EXPECT_EQ(topo.sources, std::vector<Source>{Source::kNvidiaSmiText});
    // every pair, "0-1:NV4;0-2:no(NODE);..."
    int pairs = 0;
    int nvPairs = 0;
    std::stringstream list(row.at("all_pairs"));
    std::string item;
    while (std::getline(list, item, ';')) {
      const int a = std::stoi(item.substr(0, item.find('-')));
      const int b = std::stoi(item.substr(item.find('-') + 1, item.find(':') - item.find('-') - 1));
      std::string expected = item.substr(item.find(':') + 1);
      if (expected.rfind("no(", 0) == 0) {
        expected = expected.substr(3, expected.size() - 4);
      } else {
        ++nvPairs;
      }
      EXPECT_EQ(linkCode(topo.gpuLinks[a][b]), expected) << item;
      EXPECT_EQ(linkCode(topo.gpuLinks[b][a]), expected) << item;
      ++pairs;
    }
    EXPECT_EQ(pairs, topo.gpuCount() * (topo.gpuCount() - 1) / 2);
    int parsedNv = 0;
    for (int a = 0; a < topo.gpuCount(); ++a) {
      for (int b = a + 1; b < topo.gpuCount(); ++b)
        parsedNv += topo.gpuLinks[a][b].kind == LinkKind::kNvLink;
    }
    EXPECT_EQ(parsedNv, nvPairs);
  }
}

TEST(TopoFixtures, Dgx1OldFormatWithMlxColumns) {
  const GpuTopology topo = fixture("dgx1-8gpu-hybrid-cube-mesh-rapidsai-ucx-py-docs.txt");
  ASSERT_EQ(topo.nics.size(), 4u);
  EXPECT_EQ(topo.nics[0].name, "mlx5_0");
  EXPECT_EQ(topo.nics[3].name, "mlx5_3");
  EXPECT_TRUE(topo.nics[0].rdma);
  EXPECT_EQ(topo.gpus[0].cpuAffinity, "0-19,40-59");
  EXPECT_EQ(topo.gpus[7].cpuAffinity, "20-39,60-79");
  EXPECT_EQ(topo.gpus[0].numaNode, -1);  // no NUMA Affinity column in old outputs
  EXPECT_TRUE(topo.warnings.empty()) << topo.warnings.front();
  const Classification c = classify(topo);
  EXPECT_EQ(c.nvswitch, Tristate::kUnknown);
  ASSERT_EQ(c.nvlinkGroups.size(), 1u);
  EXPECT_EQ(c.nvlinkGroups[0].size(), 8u);
  // each GPU has a NIC under its own PCIe switch
  const std::vector<std::string> expected = {"mlx5_0", "mlx5_0", "mlx5_1", "mlx5_1",
                                             "mlx5_2", "mlx5_2", "mlx5_3", "mlx5_3"};
  for (int g = 0; g < 8; ++g) {
    EXPECT_EQ(topo.nics[c.nearestNics[g].nic].name, expected[g]) << g;
    EXPECT_EQ(c.nearestNics[g].path, LinkKind::kPix);
    EXPECT_TRUE(c.nearestNics[g].gpuDirect);
  }
  EXPECT_FALSE(anyContains(c.warnings, "GPUDirect"));
  // without names no model's link count is known: the evidence says whose bound it used; with the
  // DGX-1's V100 names, the V100's own six
  EXPECT_NE(c.nvswitchEvidence.find("the 18 NVLinks of the GPUs that have the most (H100, H200, B200: this source names no GPU model)"),
            std::string::npos)
      << c.nvswitchEvidence;
  GpuTopology named = topo;
  for (GpuInfo& gpu : named.gpus) gpu.name = "Tesla V100-SXM2-32GB";
  const Classification v100 = classify(named);
  EXPECT_EQ(v100.linkBound, 6);
  EXPECT_NE(v100.nvswitchEvidence.find("fit within the 6 NVLinks of each V100 SXM2"), std::string::npos)
      << v100.nvswitchEvidence;
}

TEST(TopoFixtures, A6000PairWithNicLegendAndCpuPaths) {
  const GpuTopology topo = fixture("rtx-a6000-3gpu-nv4-pair-nic-nccl-tests-320.txt");
  ASSERT_EQ(topo.nics.size(), 2u);
  EXPECT_EQ(topo.nics[0].name, "mlx5_0");
  EXPECT_EQ(topo.nics[0].label, "NIC0");
  EXPECT_EQ(topo.nics[1].name, "mlx5_1");
  EXPECT_EQ(topo.gpus[2].numaNode, 1);
  EXPECT_EQ(topo.gpus[2].gpuNumaId, -1);
  EXPECT_EQ(topo.gpus[2].cpuAffinity, "64-71");
  const Classification c = classify(topo);
  EXPECT_EQ(c.topologyClass, TopologyClass::kNvLinkPairs);
  EXPECT_EQ(c.nvlinkGroups, (std::vector<std::vector<int>>{{0, 1}}));
  EXPECT_TRUE(anyContains(c.warnings, "GPU2 without an NVLink partner"));
  EXPECT_EQ(c.nearestNics[0].path, LinkKind::kNode);
  EXPECT_EQ(c.nearestNics[2].path, LinkKind::kPhb);
  EXPECT_FALSE(c.nearestNics[2].gpuDirect);
  EXPECT_EQ(c.warnings.front().rfind("GPU0, GPU1: their nearest NIC mlx5_0 is NODE", 0), 0u) << c.warnings.front();
  EXPECT_TRUE(anyContains(c.warnings, "GPU2's nearest NIC mlx5_0 is PHB"));
}

TEST(TopoFixtures, H100FourGpuNv6IsADirectMeshWithoutLegend) {
  const GpuTopology topo = fixture("h100-4gpu-nv6-allpairs-nic-nccl-1617.txt");
  EXPECT_EQ(topo.nics[2].name, "NIC2");  // legend cut off: names stay labels
  EXPECT_TRUE(anyContains(topo.warnings, "no NIC Legend"));
  EXPECT_EQ(topo.gpus[0].numaNode, 3);
  EXPECT_EQ(topo.gpus[3].numaNode, 5);
  EXPECT_EQ(topo.gpus[0].cpuAffinity, "6,14,22,30");
  const Classification c = classify(topo);
  EXPECT_EQ(c.topologyClass, TopologyClass::kNvLinkDirectMesh);
  EXPECT_EQ(c.nvswitch, Tristate::kUnknown);  // 3 x NV6 = 18 fits one GPU: no proof either way
  EXPECT_EQ(c.linkBound, 18);
  // the summary claims no more than the switch verdict: the counts need none, one is not ruled out
  EXPECT_EQ(c.summary, "all 6 GPU pairs NVLink (NV6) directly: the link counts need no switch");
  for (int g = 0; g < 4; ++g) {
    EXPECT_EQ(c.nearestNics[g].nic, g);
    EXPECT_TRUE(c.nearestNics[g].gpuDirect);
  }
}

TEST(TopoFixtures, H100EightGpuNv18ProvesASwitch) {
  const Classification c = classify(fixture("h100-sxm-8gpu-nv18-thunderkittens-167.txt"));
  EXPECT_EQ(c.topologyClass, TopologyClass::kFullNvSwitch);
  EXPECT_EQ(c.nvswitch, Tristate::kYes);
  EXPECT_NE(c.nvswitchEvidence.find("126"), std::string::npos) << c.nvswitchEvidence;
  EXPECT_FALSE(c.degraded);
  EXPECT_EQ(c.nearestNics[0].nic, -1);  // no NIC columns
  EXPECT_TRUE(c.warnings.empty());
}

TEST(TopoFixtures, L40sPcieOnlyWarnsAboutTheNicAcrossSockets) {
  const Classification c = classify(fixture("l40s-8gpu-pcie-node-sys-nccl-tests-273.txt"));
  EXPECT_EQ(c.topologyClass, TopologyClass::kPcieOnly);
  EXPECT_EQ(c.nvswitch, Tristate::kNo);
  EXPECT_TRUE(c.nvlinkGroups.empty());
  for (int g = 0; g < 8; ++g) EXPECT_EQ(c.nearestNics[g].path, LinkKind::kSys);
  // one cause, one warning naming every GPU it concerns
  EXPECT_EQ(std::count_if(c.warnings.begin(), c.warnings.end(),
                          [](const std::string& w) { return w.find("nearest NIC") != std::string::npos; }),
            1);
  EXPECT_TRUE(anyContains(c.warnings, "GPU0, GPU1, GPU2, GPU3, GPU4, GPU5, GPU6, GPU7: their nearest NIC NIC0 is SYS"));
}

}  // namespace
}  // namespace fabricmap::topologies
