// `nvidia-smi topo -m` format quirks: separators, escapes, legends, old outputs, garbage.
#include <gtest/gtest.h>

#include "tests/unit/topologies/topo_support.h"

namespace fabricmap::topologies {
namespace {

TEST(TopoParse, TabsAndSpacesGiveTheSameTopology) {
  SmiSpec spec{.gpus = 4,
               .code = [](int a, int b) { return a / 2 == b / 2 ? "NV12" : "SYS"; },
               .nics = {"NIC0", "NIC1"},
               .nicCode = [](int g, int n) { return g / 2 == n ? "PXB" : "SYS"; },
               .legend = {"mlx5_0", "mlx5_1"}};
  const GpuTopology tabs = parseSmiTopo(smiText(spec));
  spec.sep = "    ";
  const GpuTopology spaces = parseSmiTopo(smiText(spec));
  spec.sep = " \t ";
  const GpuTopology mixed = parseSmiTopo(smiText(spec));
  for (const GpuTopology* t : {&spaces, &mixed}) {
    ASSERT_EQ(t->gpuCount(), 4);
    for (int a = 0; a < 4; ++a) {
      for (int b = 0; b < 4; ++b)
        EXPECT_EQ(linkCode(t->gpuLinks[a][b]), linkCode(tabs.gpuLinks[a][b]));
      EXPECT_EQ(t->gpuNic[a], tabs.gpuNic[a]);
      EXPECT_EQ(t->gpus[a].numaNode, tabs.gpus[a].numaNode);
    }
  }
  EXPECT_EQ(tabs.gpus[3].numaNode, 1);
  EXPECT_EQ(tabs.gpuNic[2][1], LinkKind::kPxb);
}

TEST(TopoParse, AnsiEscapesAroundTheHeader) {
  const std::string text =
      "\x1b[4m\x1b[1m\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\r\n"
      "GPU0\t X \tNV8\tPIX\t0-15\t0\t\tN/A\r\n"
      "GPU1\tNV8\t X \tPIX\t0-15\t0\t\tN/A\r\n"
      "NIC0\tPIX\tPIX\t X \r\n"
      "\r\n"
      "NIC Legend:\r\n\r\n  NIC0: mlx5_4\r\n";
  const GpuTopology topo = parseSmiTopo(text);
  ASSERT_EQ(topo.gpuCount(), 2);
  EXPECT_EQ(topo.gpuLinks[0][1].nvlinks, 8);
  EXPECT_EQ(topo.nics[0].name, "mlx5_4");
  EXPECT_EQ(topo.gpus[1].cpuAffinity, "0-15");
  EXPECT_EQ(stripAnsi("\x1b[1;4mGPU0\x1b[0m\x1b(B x"), "GPU0 x");
}

TEST(TopoParse, NicLegendMapsLabelsToDevices) {
  const GpuTopology topo = parseSmiTopo(smiText({.gpus = 2,
                                                 .code = all("NV4"),
                                                 .nics = {"NIC0", "NIC1", "NIC2"},
                                                 .legend = {"mlx5_2", "mlx5_bond_0", "irdma0"}}));
  ASSERT_EQ(topo.nics.size(), 3u);
  EXPECT_EQ(topo.nics[0].name, "mlx5_2");
  EXPECT_EQ(topo.nics[1].name, "mlx5_bond_0");
  EXPECT_EQ(topo.nics[2].name, "irdma0");
  EXPECT_EQ(topo.nics[2].label, "NIC2");
  EXPECT_FALSE(anyContains(topo.warnings, "no NIC Legend"));
}

TEST(TopoParse, MissingLegendKeepsLabels) {
  const GpuTopology topo =
      parseSmiTopo(smiText({.gpus = 2, .code = all("NV4"), .nics = {"NIC0", "NIC1"}}));
  EXPECT_EQ(topo.nics[1].name, "NIC1");
  EXPECT_TRUE(anyContains(topo.warnings, "no NIC Legend: device names of NIC0, NIC1 unknown"));
}

TEST(TopoParse, OldOutputsWithoutAffinityColumnsAndSoc) {
  const std::string text =
      "        GPU0    GPU1    GPU2    mlx5_0\n"
      "GPU0     X      PHB     SOC     PHB\n"
      "GPU1    PHB      X      SOC     PHB\n"
      "GPU2    SOC     SOC      X      SOC\n"
      "mlx5_0  PHB     PHB     SOC      X\n";
  const GpuTopology topo = parseSmiTopo(text);
  EXPECT_EQ(topo.gpuLinks[0][2].kind, LinkKind::kSys);
  EXPECT_EQ(topo.nics[0].name, "mlx5_0");
  EXPECT_EQ(topo.gpus[0].cpuAffinity, "");
  EXPECT_EQ(topo.gpus[0].numaNode, -1);
  EXPECT_TRUE(topo.warnings.empty());
}

TEST(TopoParse, TextBeforeAndAfterTheMatrix) {
  const std::string text = "$ nvidia-smi topo -m\nGPU0 and GPU1 below, the header is next:\n" +
                           smiText({.gpus = 2, .code = all("NV2")}) +
                           "\nGPU0 X this line is prose after the matrix\n"
                           "        GPU0    GPU1\nGPU0     X      SYS\n";
  const GpuTopology topo = parseSmiTopo(text);
  EXPECT_EQ(topo.gpuCount(), 2);
  EXPECT_EQ(topo.gpuLinks[0][1].kind, LinkKind::kNvLink);  // the first matrix counts
}

TEST(TopoParse, AsymmetricMatrixIsAWarning) {
  const std::string text =
      "\tGPU0\tGPU1\n"
      "GPU0\tX\tNV4\n"
      "GPU1\tPHB\tX\n";
  const GpuTopology topo = parseSmiTopo(text);
  EXPECT_TRUE(anyContains(topo.warnings, "GPU0-GPU1 reads NV4 in one row and PHB in the other"));
}

TEST(TopoParse, GarbageAndMalformedInputAreUsageErrors) {
  EXPECT_NE(errorOf([] {
              parseSmiTopo("hello world\nnothing to see\n", "f.txt");
            }).find("f.txt: no `nvidia-smi topo -m` matrix found"),
            std::string::npos);
  EXPECT_NE(errorOf([] { parseSmiTopo(""); }).find("no `nvidia-smi topo -m` matrix"),
            std::string::npos);
  EXPECT_NE(errorOf([] {
              parseSmiTopo("NVIDIA-SMI has failed because it couldn't communicate with the driver");
            }).find("no `nvidia-smi topo -m` matrix"),
            std::string::npos);
  const std::string badCode = "\tGPU0\tGPU1\nGPU0\tX\tNVX\nGPU1\tNVX\tX\n";
  const std::string message = errorOf([&] { parseSmiTopo(badCode, "t.txt"); });
  EXPECT_NE(message.find("t.txt line 2: 'NVX' in the GPU0 row, column GPU1, is not a link code"),
            std::string::npos)
      << message;
  EXPECT_NE(
      errorOf([] { parseSmiTopo("\tGPU0\tGPU1\nGPU0\tX\nGPU1\tPHB\tX\n"); }).find("link cells"),
      std::string::npos);
  EXPECT_NE(errorOf([] {
              parseSmiTopo("\tGPU0\tGPU1\nGPU0\tPHB\tX\nGPU1\tPHB\tX\n");
            }).find("X belongs on the diagonal only"),
            std::string::npos);
  EXPECT_NE(errorOf([] {
              parseSmiTopo("\tGPU0\tGPU1\nGPU0\tX\tPHB\n\n");
            }).find("GPU1 is in the header but has no row"),
            std::string::npos);
  EXPECT_NE(errorOf([] {
              parseSmiTopo("\tGPU0\tGPU2\nGPU0\tX\tPHB\n");
            }).find("GPU columns out of order"),
            std::string::npos);
  EXPECT_NE(
      errorOf([] { parseSmiTopo("\tGPU0\tGPU1\nGPU0\tX\tPHB\nGPU0\tX\tPHB\n"); }).find("two rows"),
      std::string::npos);
  EXPECT_NE(errorOf([] {
              readSmiTopoFile("/nonexistent/topo.txt");
            }).find("cannot read topology file '/nonexistent/topo.txt': No such file or directory"),
            std::string::npos);
  EXPECT_NE(errorOf([] { readSmiTopoFile("/"); }).find("is a directory"), std::string::npos);
}

TEST(TopoParse, LinkCodes) {
  EXPECT_EQ(parseLinkCode("NV18")->nvlinks, 18);
  EXPECT_EQ(parseLinkCode("NV18")->kind, LinkKind::kNvLink);
  EXPECT_FALSE(parseLinkCode("NV").has_value());
  EXPECT_FALSE(parseLinkCode("NV0").has_value());
  EXPECT_FALSE(parseLinkCode("NV1x").has_value());
  EXPECT_FALSE(parseLinkCode("pix").has_value());
  EXPECT_EQ(parseLinkCode("SOC")->kind, LinkKind::kSys);
  EXPECT_EQ(linkCode(*parseLinkCode("NODE")), "NODE");
  EXPECT_LT(pcieRank(LinkKind::kPix), pcieRank(LinkKind::kPxb));
  EXPECT_LT(pcieRank(LinkKind::kNode), pcieRank(LinkKind::kSys));
}

}  // namespace
}  // namespace fabricmap::topologies
