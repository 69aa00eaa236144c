// Reference specs of GPUs, PCIe generations and NICs.
#include <gtest/gtest.h>

#include "tests/unit/topologies/topo_support.h"

namespace fabricmap::topologies {
namespace {

TEST(TopoSpecs, LookupByDeviceName) {
  struct Case {
    const char* name;
    const char* model;
    int links;
    double nvlinkGBps;
    int pcie;
  };
  const std::vector<Case> cases = {
      {"NVIDIA H100 80GB HBM3", "H100 SXM", 18, 450, 5},
      {"NVIDIA H100 PCIe", "H100 PCIe", 12, 300, 5},
      {"NVIDIA H100 NVL", "H100 NVL", 12, 300, 5},
      {"NVIDIA H200", "H200 SXM", 18, 450, 5},
      {"NVIDIA H200 NVL", "H200 NVL", 18, 450, 5},
      {"NVIDIA H20", "H20", 18, 450, 5},
      {"NVIDIA H800", "H800 SXM", 8, 200, 5},
      {"NVIDIA A100-SXM4-80GB", "A100 SXM 80GB", 12, 300, 4},
      {"NVIDIA A100-SXM4-40GB", "A100 SXM 40GB", 12, 300, 4},
      {"NVIDIA A100 80GB PCIe", "A100 PCIe 80GB", 12, 300, 4},
      {"NVIDIA A100-PCIE-40GB", "A100 PCIe 40GB", 12, 300, 4},
      {"Tesla V100-SXM2-32GB", "V100 SXM2", 6, 150, 3},
      {"Tesla V100-PCIE-16GB", "V100 PCIe", 0, 0, 3},
      {"NVIDIA B200", "B200", 18, 900, 5},
      {"NVIDIA GB200", "GB200", 18, 900, 0},
      {"NVIDIA L40S", "L40S", 0, 0, 4},
      {"NVIDIA L40", "L40", 0, 0, 4},
      {"NVIDIA L4", "L4", 0, 0, 4},
      {"NVIDIA A10", "A10", 0, 0, 4},
      {"NVIDIA A10G", "A10G", 0, 0, 4},
      {"NVIDIA GeForce RTX 4090", "RTX 4090", 0, 0, 4},
      {"NVIDIA GeForce RTX 5090", "RTX 5090", 0, 0, 5},
      {"NVIDIA RTX A6000", "RTX A6000", 4, 56.25, 4},
      {"NVIDIA RTX 6000 Ada Generation", "RTX 6000 Ada", 0, 0, 4},
      {"nvidia h100 80gb hbm3", "H100 SXM", 18, 450, 5},
  };
  for (const Case& c : cases) {
    const std::optional<GpuSpec> spec = gpuSpecForName(c.name);
    ASSERT_TRUE(spec.has_value()) << c.name;
    EXPECT_EQ(spec->model, c.model) << c.name;
    EXPECT_EQ(spec->nvlinksPerGpu, c.links) << c.name;
    EXPECT_DOUBLE_EQ(spec->nvlinkGBps, c.nvlinkGBps) << c.name;
    EXPECT_EQ(spec->pcieGeneration, c.pcie) << c.name;
    EXPECT_GT(spec->memoryGBps, 0) << c.name;
    EXPECT_EQ(spec->nvlinkGeneration == 0, spec->nvlinksPerGpu == 0) << c.name;
  }
  EXPECT_DOUBLE_EQ(gpuSpecForName("NVIDIA H200")->memoryGBps, 4800);
  EXPECT_TRUE(gpuSpecForName("NVIDIA RTX A6000")->nvlinkBridge);
  EXPECT_FALSE(gpuSpecForName("NVIDIA H100 80GB HBM3")->nvlinkBridge);
  for (const char* unknown :
       {"", "NVIDIA Quadro P4000", "AMD Instinct MI300X", "H1000", "NVIDIA"}) {
    EXPECT_FALSE(gpuSpecForName(unknown).has_value()) << unknown;
  }
  EXPECT_GE(gpuSpecs().size(), 20u);
}

// The memory the names nccl-tests prints carry (the fixtures' "A100-SXM4-40GB", NVML's "H100 80GB
// HBM3", a bare "H200"); a superchip's name counts its CPU's memory and tells nothing of the GPU's.
TEST(TopoSpecs, GpuMemoryFromName) {
  constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
  EXPECT_EQ(gpuMemoryFromName("A100-SXM4-40GB"), 40 * kGiB);
  EXPECT_EQ(gpuMemoryFromName("NVIDIA A100-SXM4-80GB"), 80 * kGiB);
  EXPECT_EQ(gpuMemoryFromName("NVIDIA H100 80GB HBM3"), 80 * kGiB);
  EXPECT_EQ(gpuMemoryFromName("NVIDIA H200"), 141 * kGiB);
  EXPECT_EQ(gpuMemoryFromName("NVIDIA H100 NVL"), 94 * kGiB);
  EXPECT_EQ(gpuMemoryFromName("Tesla V100-SXM2-32GB"), 32 * kGiB);
  EXPECT_EQ(gpuMemoryFromName("NVIDIA L40S"), 48 * kGiB);
  EXPECT_FALSE(gpuMemoryFromName("NVIDIA GH200 120GB").has_value());
  EXPECT_FALSE(gpuMemoryFromName("NVIDIA GH200 480GB").has_value());
  EXPECT_FALSE(gpuMemoryFromName("NVIDIA GB200").has_value());
  EXPECT_FALSE(gpuMemoryFromName("NVIDIA Quadro P4000 8GB").has_value());  // a model it does not know
  EXPECT_FALSE(gpuMemoryFromName("").has_value());
  for (const GpuSpec& spec : gpuSpecs()) EXPECT_GT(spec.memoryGB, 0) << spec.model;
}

TEST(TopoSpecs, PcieAndNicRates) {
  EXPECT_EQ(pcieX16GBps(3), 16.0);
  EXPECT_EQ(pcieX16GBps(4), 32.0);
  EXPECT_EQ(pcieX16GBps(5), 64.0);
  EXPECT_EQ(pcieX16GBps(6), 128.0);
  EXPECT_FALSE(pcieX16GBps(0).has_value());
  EXPECT_FALSE(pcieX16GBps(7).has_value());
  EXPECT_DOUBLE_EQ(nicGBps(100), 12.5);
  EXPECT_DOUBLE_EQ(nicGBps(200), 25);
  EXPECT_DOUBLE_EQ(nicGBps(400), 50);
  EXPECT_DOUBLE_EQ(nicGBps(800), 100);
  EXPECT_EQ(infinibandRateName(400), "NDR");
  EXPECT_EQ(infinibandRateName(200), "HDR");
  EXPECT_EQ(infinibandRateName(25), "");
}

}  // namespace
}  // namespace fabricmap::topologies
