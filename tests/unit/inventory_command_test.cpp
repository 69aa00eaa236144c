// `fabricmap inventory`: text and JSON of a saved sysfs tree, this machine, bad options.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"
#include "orchestrator/commands.h"

namespace fabricmap::orchestrator {
namespace {

using Json = nlohmann::json;

std::string tree(const std::string& name) {
  return (std::filesystem::path(FABRICMAP_TEST_DATA) / "sysfs" / name).string();
}

std::string runInventory(const std::vector<std::string>& args) {
  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
  try {
    EXPECT_EQ(inventoryCommand(args), 0);
  } catch (...) {
    std::cout.rdbuf(old);
    throw;
  }
  std::cout.rdbuf(old);
  return captured.str();
}

TEST(InventoryCommand, JsonOfAFaultyNode) {
  const Json j = Json::parse(runInventory({"--sysfs-root", tree("nic-200g-port-down"), "--json"}));
  ASSERT_EQ(j["ports"].size(), 8u);
  EXPECT_EQ(j["ports"][3]["rate_gbps"], 200);
  EXPECT_EQ(j["ports"][3]["speed"], "HDR");
  EXPECT_EQ(j["ports"][5]["state"], "DOWN");
  EXPECT_EQ(j["ports"][0]["link_layer"], "IB");
  EXPECT_EQ(j["ports"][0]["counters"]["symbol_error"], 0);
  EXPECT_EQ(j["gpus"], 8);
  EXPECT_EQ(j["pcie"].size(), 17u);
  EXPECT_EQ(j["gpudirect"]["ready"], "yes");
  EXPECT_TRUE(j["gpu_list"].empty());  // a saved tree: NVML is not this machine's to ask about it
  ASSERT_EQ(j["findings"].size(), 2u);
  EXPECT_EQ(j["findings"][0]["kind"], "nic_down");
  EXPECT_EQ(j["findings"][0]["severity"], "error");
  EXPECT_EQ(j["findings"][1]["kind"], "nic_rate_mismatch");
  EXPECT_EQ(j["findings"][1]["confidence"], 1.0);
}

TEST(InventoryCommand, TextOfAHealthyNode) {
  const std::string out = runInventory({"--sysfs-root", tree("healthy-8gpu-8nic")});
  EXPECT_NE(out.find("RDMA ports: 8"), std::string::npos) << out;
  EXPECT_NE(out.find("mlx5_0   port 1  ACTIVE LinkUp    400 Gb/s (4X NDR)  IB  ibp28s0  0000:1c:00.0  NUMA 0"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("GPU      0000:1b:00.0  x16 32 GT/s of x16 32 GT/s (slot x16 32 GT/s)  NUMA 0"), std::string::npos)
      << out;
  EXPECT_NE(out.find("GPUDirect RDMA: yes (nvidia_peermem loaded)"), std::string::npos) << out;
  EXPECT_NE(out.find("findings: 0"), std::string::npos) << out;
}

TEST(InventoryCommand, CountersReadTwice) {
  // the same tree twice: nothing grew
  const Json j = Json::parse(runInventory({"--sysfs-root", tree("counters-after"), "--interval", "0.01", "--json"}));
  EXPECT_TRUE(j["findings"].empty()) << j["findings"].dump();
}

// A node without RDMA NICs (this machine, most likely) says so plainly and exits 0.
TEST(InventoryCommand, ThisMachine) {
  if (std::filesystem::exists("/sys/class/infiniband") && !std::filesystem::is_empty("/sys/class/infiniband")) {
    GTEST_SKIP() << "this machine has RDMA devices";
  }
  const std::string out = runInventory({});
  EXPECT_NE(out.find("RDMA ports: none (no RDMA NIC)"), std::string::npos);
  // NVML's GPUs: none where no driver is (this machine, most likely), each with its memory's health
  if (!std::filesystem::exists("/proc/driver/nvidia")) {
    EXPECT_NE(out.find("GPUs as NVML describes them (retired pages single/double-bit, remapped rows correctable/"
                       "uncorrectable): 0"),
              std::string::npos)
        << out;
  }
  EXPECT_TRUE(Json::parse(runInventory({"--json"})).contains("gpu_list"));
}

TEST(InventoryCommand, BadOptions) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--interval", "-1"}, {"--interval", "x"}, {"stray"}, {"--sysfs"}}) {
    try {
      inventoryCommand(args);
      ADD_FAILURE() << "accepted " << args[0];
    } catch (const core::UsageError& e) {
      EXPECT_EQ(e.code(), core::ExitCode::kUsage);
      EXPECT_NE(std::string(e.what()).find("fabricmap inventory"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace fabricmap::orchestrator
