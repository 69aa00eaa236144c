// `fabricmap topo`: JSON and text output, discovery against a fake sysfs, bad input.
#include <gtest/gtest.h>

#include "tests/unit/topologies/topo_support.h"

namespace fabricmap::topologies {
namespace {

// Runs the command with std::cout captured.
std::string runTopo(const std::vector<std::string>& args) {
  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
  try {
    EXPECT_EQ(orchestrator::topoCommand(args), 0);
  } catch (...) {
    std::cout.rdbuf(old);
    throw;
  }
  std::cout.rdbuf(old);
  return captured.str();
}

TEST(TopoCommand, JsonOfTheDgx1Fixture) {
  const Json j = Json::parse(runTopo(
      {"--file", (dataDir() / "dgx1-8gpu-hybrid-cube-mesh-rapidsai-ucx-py-docs.txt").string(),
       "--json"}));
  EXPECT_EQ(j["schema"], kTopologyJsonSchema);
  EXPECT_EQ(j["source"], "nvidia-smi");
  EXPECT_EQ(j["class"], "NVLINK_PARTIAL_MESH");
  EXPECT_EQ(j["nvswitch"], "unknown");
  EXPECT_EQ(j["degraded"], false);
  EXPECT_EQ(j["gpus"], 8);
  EXPECT_TRUE(j["hostname"].is_null());
  ASSERT_EQ(j["pairs"].size(), 28u);
  EXPECT_EQ(j["pairs"][0], (Json{{"a", 0},
                                 {"b", 1},
                                 {"link", "NVLINK"},
                                 {"nvlinks", 1},
                                 {"code", "NV1"},
                                 {"p2p", "unknown"}}));
  EXPECT_EQ(j["pairs"][4]["link"], "SYS");  // 0-5
  EXPECT_EQ(j["pairs"][4]["nvlinks"], 0);
  ASSERT_EQ(j["nics"].size(), 4u);
  EXPECT_EQ(j["nics"][1]["name"], "mlx5_1");
  EXPECT_TRUE(j["nics"][1]["rate_gbps"].is_null());
  EXPECT_TRUE(j["nics"][1]["link_layer"].is_null());
  ASSERT_EQ(j["nearest_nics"].size(), 8u);
  EXPECT_EQ(j["nearest_nics"][2],
            (Json{{"gpu", 2}, {"nic", "mlx5_1"}, {"path", "PIX"}, {"gpudirect_rdma", true}}));
  ASSERT_EQ(j["gpu_list"].size(), 8u);
  EXPECT_EQ(j["gpu_list"][4]["cpu_affinity"], "20-39,60-79");
  EXPECT_TRUE(j["gpu_list"][4]["name"].is_null());
  EXPECT_EQ(j["gpu_list"][4]["nearest_nic"], "mlx5_2");
  EXPECT_EQ(j["nvlink_groups"], Json::parse("[[0,1,2,3,4,5,6,7]]"));
  EXPECT_TRUE(j["warnings"].is_array());
}

TEST(TopoCommand, NvswitchIsTrueFalseOrUnknown) {
  const auto nvswitchOf = [](const std::string& file) {
    return Json::parse(runTopo({"--file", (dataDir() / file).string(), "--json"}))["nvswitch"];
  };
  EXPECT_EQ(nvswitchOf("h100-sxm-8gpu-nv18-thunderkittens-167.txt"), true);
  EXPECT_EQ(nvswitchOf("l40s-8gpu-pcie-node-sys-nccl-tests-273.txt"), false);
  EXPECT_EQ(nvswitchOf("h100-4gpu-nv6-allpairs-nic-nccl-1617.txt"), "unknown");
}

TEST(TopoCommand, TextOutput) {
  const std::string out =
      runTopo({"--file", (dataDir() / "rtx-a6000-3gpu-nv4-pair-nic-nccl-tests-320.txt").string()});
  EXPECT_NE(out.find("class: NVLINK_PAIRS"), std::string::npos) << out;
  EXPECT_NE(out.find("GPUs: 3"), std::string::npos);
  EXPECT_NE(out.find("NV4"), std::string::npos);
  EXPECT_NE(out.find("mlx5_1"), std::string::npos);
  EXPECT_NE(out.find("warnings:"), std::string::npos);
  EXPECT_NE(runTopo({"--help"}).find("usage: fabricmap topo"), std::string::npos);
}

TEST(TopoCommand, DiscoveryJsonAgainstAFakeSysfs) {
  TwoSocketNode node;
  const Json j = Json::parse(runTopo({"--json", "--sysfs-root", node.sys.root().string()}));
  if (j["source"] != "sysfs") GTEST_SKIP() << "NVML is available here";
  EXPECT_EQ(j["class"], "NO_GPU");
  EXPECT_EQ(j["gpus"], 0);
  ASSERT_EQ(j["nics"].size(), 3u);
  EXPECT_EQ(j["nics"][0]["rate_gbps"], 400.0);
  EXPECT_EQ(j["nics"][0]["rate_gbytes_per_s"], 50.0);
  EXPECT_EQ(j["nics"][0]["link_layer"], "IB");
  EXPECT_EQ(j["nics"][1]["link_layer"], "RoCE");
  EXPECT_EQ(j["nics"][2]["link_layer"], "Ethernet");
  EXPECT_EQ(j["nics"][2]["rdma"], false);
  bool said = false;
  for (const Json& w : j["warnings"])
    said |= w.get<std::string>().find("NVML not available") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(TopoCommand, BadInputIsAUsageError) {
  EXPECT_NE(errorOf([] {
              runTopo({"--file", "/nonexistent/topo.txt"});
            }).find("cannot read topology file"),
            std::string::npos);
  EXPECT_NE(errorOf([] { runTopo({"--bogus"}); }).find("usage: fabricmap topo"), std::string::npos);
  EXPECT_NE(errorOf([] { runTopo({"extra"}); }).find("usage: fabricmap topo"), std::string::npos);
  EXPECT_NE(errorOf([] { runTopo({"--file"}); }).find("usage: fabricmap topo"), std::string::npos);
  TempDir dir;
  writeFile(dir.path() / "garbage.txt", "this is not a topology\n");
  EXPECT_NE(errorOf([&] {
              runTopo({"--file", (dir.path() / "garbage.txt").string()});
            }).find("no `nvidia-smi topo -m` matrix found"),
            std::string::npos);
}

}  // namespace
}  // namespace fabricmap::topologies
