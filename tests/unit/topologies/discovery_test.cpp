// sysfs readers and NVML/sysfs discovery against fakes (and this machine).
#include <gtest/gtest.h>

#include "tests/unit/topologies/topo_support.h"

namespace fabricmap::topologies {
namespace {

TEST(TopoSysfs, BusIdsAndRates) {
  EXPECT_EQ(sysfsBusId("00000000:1B:00.0"), "0000:1b:00.0");
  EXPECT_EQ(sysfsBusId("0000:1b:00.0"), "0000:1b:00.0");
  EXPECT_EQ(sysfsBusId("00010000:E0:00.0"), "10000:e0:00.0");
  EXPECT_EQ(parseIbRate("400 Gb/sec (4X NDR)"), 400.0);
  EXPECT_EQ(parseIbRate("2.5 Gb/sec (1X SDR)"), 2.5);
  EXPECT_FALSE(parseIbRate("").has_value());
  EXPECT_FALSE(parseIbRate("fast").has_value());
  EXPECT_FALSE(parseIbRate("inf Gb/sec").has_value());  // found by fuzzing: no rate is infinite
  EXPECT_FALSE(parseIbRate("nan").has_value());
  EXPECT_EQ(parseIbLinkLayer("InfiniBand"), LinkLayer::kInfiniBand);
  EXPECT_EQ(parseIbLinkLayer("Ethernet"), LinkLayer::kRoce);
  EXPECT_EQ(parseIbLinkLayer("Unspecified"), LinkLayer::kUnknown);
}

TEST(TopoSysfs, PciPathKinds) {
  const PciLocation gpu{
      "pci0000:17", {"0000:17:00.0", "0000:18:00.0", "0000:19:00.0", "0000:1a:00.0"}, 0};
  const PciLocation sameSwitch{
      "pci0000:17", {"0000:17:00.0", "0000:18:00.0", "0000:19:02.0", "0000:1c:00.0"}, 0};
  const PciLocation deeper{"pci0000:17",
                           {"0000:17:00.0", "0000:18:00.0", "0000:19:03.0", "0000:20:00.0",
                            "0000:21:00.0", "0000:22:00.0"},
                           0};
  const PciLocation otherPort{"pci0000:17", {"0000:17:01.0", "0000:30:00.0"}, 0};
  const PciLocation otherComplex{"pci0000:3a", {"0000:3a:00.0", "0000:3b:00.0"}, 0};
  const PciLocation otherSocket{"pci0000:97", {"0000:97:00.0", "0000:98:00.0"}, 1};
  const PciLocation unknownNuma{"pci0000:97", {"0000:97:00.0", "0000:98:00.0"}, -1};
  EXPECT_EQ(pciPath(gpu, sameSwitch), LinkKind::kPix);
  EXPECT_EQ(pciPath(gpu, deeper), LinkKind::kPxb);
  EXPECT_EQ(pciPath(gpu, otherPort), LinkKind::kPhb);
  EXPECT_EQ(pciPath(gpu, otherComplex), LinkKind::kNode);
  EXPECT_EQ(pciPath(gpu, otherSocket), LinkKind::kSys);
  EXPECT_EQ(pciPath(gpu, unknownNuma), LinkKind::kNode);
}

TEST(TopoSysfs, NicsFromAFakeTree) {
  TwoSocketNode node;
  const std::vector<NicInfo> nics = scanNics(node.sys.root());
  ASSERT_EQ(nics.size(), 3u);  // mlx5_0, mlx5_1, eth0; not ib0/ens3f0 (RDMA netdevs) nor lo
  EXPECT_EQ(nics[0].name, "mlx5_0");
  EXPECT_EQ(nics[0].rateGbps, 400);
  EXPECT_EQ(nics[0].linkLayer, LinkLayer::kInfiniBand);
  EXPECT_EQ(nics[0].state, "ACTIVE");
  EXPECT_EQ(nics[0].netdev, "ib0");
  EXPECT_EQ(nics[0].pciBusId, "0000:1c:00.0");
  EXPECT_EQ(nics[0].numaNode, 0);
  EXPECT_TRUE(nics[0].rdma);
  EXPECT_EQ(nics[1].name, "mlx5_1");
  EXPECT_EQ(nics[1].rateGbps, 100);  // the active port 2, not the down port 1
  EXPECT_EQ(nics[1].linkLayer, LinkLayer::kRoce);
  EXPECT_EQ(nics[1].netdev, "ens3f0");
  EXPECT_EQ(nics[2].name, "eth0");
  EXPECT_EQ(nics[2].rateGbps, 25);
  EXPECT_EQ(nics[2].linkLayer, LinkLayer::kEthernet);
  EXPECT_EQ(nics[2].state, "up");
  EXPECT_EQ(nics[2].pciBusId, "0000:00:03.0");  // the PCI function above virtio0
  EXPECT_FALSE(nics[2].rdma);
  EXPECT_EQ(
      nvidiaPciGpus(node.sys.root()),
      (std::vector<std::string>{"0000:1a:00.0", "0000:1b:00.0", "0000:9a:00.0", "0000:9b:00.0"}));
  const std::optional<PciLocation> loc = pciLocation(node.sys.root(), "0000:1b:00.0");
  ASSERT_TRUE(loc.has_value());
  EXPECT_EQ(loc->rootComplex, "pci0000:17");
  EXPECT_EQ(loc->chain.size(), 4u);
  EXPECT_EQ(loc->numaNode, 0);
  EXPECT_FALSE(pciLocation(node.sys.root(), "0000:ff:00.0").has_value());
  EXPECT_TRUE(scanNics(node.sys.root() / "missing").empty());
}

TEST(TopoDiscovery, WithoutNvmlListsSysfsNicsAndSaysWhy) {
  TwoSocketNode node;
  const GpuTopology topo =
      discoverNode(nullptr, "libnvidia-ml.so.1: cannot open shared object file", node.sys.root());
  EXPECT_EQ(topo.gpuCount(), 0);
  EXPECT_EQ(topo.nics.size(), 3u);
  EXPECT_EQ(topo.sources, std::vector<Source>{Source::kSysfs});
  EXPECT_TRUE(anyContains(topo.warnings, "NVML not available (libnvidia-ml.so.1: cannot open"));
  EXPECT_TRUE(anyContains(topo.warnings, "4 NVIDIA GPU(s) on the PCI bus"));
  EXPECT_EQ(classify(topo).topologyClass, TopologyClass::kNoGpu);
  const GpuTopology bare = discoverNode(nullptr, "none", node.sys.root() / "nothing");
  EXPECT_TRUE(anyContains(bare.warnings, "no sysfs at"));
}

TEST(TopoDiscovery, ThisMachine) {
  NvmlLoad nvml = loadNvml();
  if (nvml.api)
    GTEST_SKIP() << "NVML is available here; this test covers machines without a driver";
  EXPECT_FALSE(nvml.error.empty());
  const GpuTopology topo = discoverLocalNode();
  EXPECT_EQ(classify(topo).topologyClass, TopologyClass::kNoGpu);
  EXPECT_TRUE(anyContains(topo.warnings, "NVML not available"));
  EXPECT_FALSE(topo.hostname.empty());
  EXPECT_FALSE(loadNvml("/nonexistent/libnvidia-ml.so.1").error.empty());
  // a library that loads but is not NVML: the missing entry points are the reason
  const NvmlLoad notNvml = loadNvml("libc.so.6");
  EXPECT_EQ(notNvml.api, nullptr);
  EXPECT_NE(notNvml.error.find("lacks nvmlInit_v2"), std::string::npos) << notNvml.error;
}

// NVML as a test node: per GPU its name, bus id and NVLinks (far end type and bus id).
class FakeNvml : public NvmlApi {
 public:
  struct NvLink {
    LinkState state = LinkState::kActive;
    RemoteType type = RemoteType::kGpu;
    std::string remoteBus;
  };
  struct Gpu {
    std::string name;
    std::string bus;  // NVML form, 8-digit domain
    std::vector<NvLink> links;
    std::string error;
  };
  std::vector<Gpu> gpus;
  std::function<std::optional<LinkKind>(int, int)> ancestor = [](int, int) { return std::nullopt; };
  std::function<Tristate(int, int)> p2p = [](int, int) { return Tristate::kYes; };
  std::vector<std::string> missing;
  std::function<GpuMemoryHealth(int)> health = [](int) { return GpuMemoryHealth{}; };

  int deviceCount() override { return static_cast<int>(gpus.size()); }
  std::string deviceError(int g) override { return gpus[g].error; }
  std::optional<std::string> name(int g) override { return gpus[g].name; }
  std::optional<std::string> uuid(int g) override { return fmt::format("GPU-{:08x}", g); }
  std::optional<std::string> pciBusId(int g) override { return gpus[g].bus; }
  std::optional<std::uint64_t> memoryBytes(int) override { return std::uint64_t{80} << 30; }
  LinkState nvlinkState(int g, int link) override {
    return link < static_cast<int>(gpus[g].links.size()) ? gpus[g].links[link].state
                                                         : LinkState::kAbsent;
  }
  std::optional<std::string> nvlinkRemoteBusId(int g, int link) override {
    return gpus[g].links[link].remoteBus;
  }
  RemoteType nvlinkRemoteType(int g, int link) override { return gpus[g].links[link].type; }
  std::optional<LinkKind> commonAncestor(int a, int b) override { return ancestor(a, b); }
  Tristate p2pRead(int a, int b) override { return p2p(a, b); }
  GpuMemoryHealth memoryHealth(int g) override { return health(g); }
  std::vector<std::string> missingSymbols() const override { return missing; }
};

const std::vector<std::string> kNodeGpus = {"00000000:1A:00.0", "00000000:1B:00.0",
                                            "00000000:9A:00.0", "00000000:9B:00.0"};

TEST(TopoDiscovery, NvmlSwitchedNodeWithOneGpuDown) {
  TwoSocketNode node;
  FakeNvml nvml;
  for (int g = 0; g < 4; ++g) {
    FakeNvml::Gpu gpu{"NVIDIA H100 80GB HBM3", kNodeGpus[g], {}, {}};
    for (int l = 0; l < 18; ++l) {
      gpu.links.push_back({g == 3 ? NvmlApi::LinkState::kInactive : NvmlApi::LinkState::kActive,
                           NvmlApi::RemoteType::kSwitch, "00000000:C0:00.0"});
    }
    nvml.gpus.push_back(gpu);
  }
  nvml.ancestor = [](int a, int b) { return a / 2 == b / 2 ? LinkKind::kPix : LinkKind::kSys; };
  nvml.health = [](int g) {
    GpuMemoryHealth h;
    h.remappedUncorrectable = g;
    h.remapPending = g == 3 ? Tristate::kYes : Tristate::kNo;
    return h;
  };
  const GpuTopology topo = discoverNode(&nvml, "", node.sys.root());
  ASSERT_EQ(topo.gpuCount(), 4);
  EXPECT_EQ(topo.gpus[2].health.remappedUncorrectable, 2);  // each GPU's own
  EXPECT_EQ(topo.gpus[3].health.remapPending, Tristate::kYes);
  EXPECT_EQ(topo.gpus[0].health.ecc, Tristate::kUnknown);
  EXPECT_EQ(topo.sources, (std::vector<Source>{Source::kNvml, Source::kSysfs}));
  EXPECT_EQ(topo.nvswitch, Tristate::kYes);
  EXPECT_EQ(topo.gpus[0].pciBusId, "0000:1a:00.0");
  EXPECT_EQ(topo.gpus[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(topo.gpus[0].uuid, "GPU-00000000");
  EXPECT_EQ(topo.gpus[2].numaNode, 1);
  EXPECT_EQ(topo.gpus[2].cpuAffinity, "32-63");
  EXPECT_EQ(topo.gpus[0].memoryBytes, std::uint64_t{80} << 30);
  EXPECT_EQ(topo.gpus[3].nvlinksInactive, 18);
  EXPECT_EQ(linkCode(topo.gpuLinks[0][2]), "NV18");
  EXPECT_EQ(linkCode(topo.gpuLinks[2][3]), "PIX");  // GPU3 down: the PCIe path from NVML
  EXPECT_EQ(linkCode(topo.gpuLinks[3][0]), "SYS");
  EXPECT_EQ(topo.gpuLinks[0][1].p2p, Tristate::kYes);
  // NIC paths from sysfs: GPU0 shares mlx5_0's switch, GPU2 reaches mlx5_1 through two switches
  ASSERT_EQ(topo.nics.size(), 3u);
  EXPECT_EQ(topo.gpuNic[0][0], LinkKind::kPix);
  EXPECT_EQ(topo.gpuNic[0][1], LinkKind::kSys);
  EXPECT_EQ(topo.gpuNic[2][1], LinkKind::kPxb);
  EXPECT_EQ(topo.gpuNic[0][2], LinkKind::kNode);  // virtio NIC: other root complex, NUMA unknown
  const Classification c = classify(topo);
  EXPECT_EQ(c.topologyClass, TopologyClass::kNvLinkPartialMesh);
  EXPECT_TRUE(c.degraded);
  EXPECT_EQ(c.nvswitchEvidence, "NVML reports NVLinks to an NVSwitch");
  EXPECT_TRUE(anyContains(c.warnings, "GPU3 has 18 NVLink(s) that are not active"));
  EXPECT_EQ(topo.nics[c.nearestNics[0].nic].name, "mlx5_0");
  EXPECT_TRUE(c.nearestNics[0].gpuDirect);
  EXPECT_EQ(topo.nics[c.nearestNics[2].nic].name, "mlx5_1");
  EXPECT_EQ(c.nearestNics[2].path, LinkKind::kPxb);
}

TEST(TopoDiscovery, NvmlDirectMeshAndPeerLinks) {
  TwoSocketNode node;
  FakeNvml nvml;
  for (int g = 0; g < 4; ++g) {
    FakeNvml::Gpu gpu{"NVIDIA H100 80GB HBM3", kNodeGpus[g], {}, {}};
    for (int p = 0; p < 4; ++p) {
      if (p == g) continue;
      for (int l = 0; l < 6; ++l)
        gpu.links.push_back({NvmlApi::LinkState::kActive, NvmlApi::RemoteType::kGpu, kNodeGpus[p]});
    }
    nvml.gpus.push_back(gpu);
  }
  const GpuTopology topo = discoverNode(&nvml, "", node.sys.root());
  EXPECT_EQ(topo.nvswitch, Tristate::kNo);
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) EXPECT_EQ(linkCode(topo.gpuLinks[a][b]), a == b ? "X" : "NV6");
  }
  const Classification c = classify(topo);
  EXPECT_EQ(c.topologyClass, TopologyClass::kNvLinkDirectMesh);
  EXPECT_EQ(c.nvswitch, Tristate::kNo);
}

TEST(TopoDiscovery, OlderNvmlDegradesGracefully) {
  TwoSocketNode node;
  FakeNvml nvml;
  nvml.missing = {"nvmlDeviceGetNvLinkRemoteDeviceType", "nvmlDeviceGetTopologyCommonAncestor"};
  // far end type unknown: GPU peers are recognised by bus id, anything else is taken as a switch
  nvml.gpus = {
      {"NVIDIA A100-SXM4-80GB",
       kNodeGpus[0],
       {{NvmlApi::LinkState::kActive, NvmlApi::RemoteType::kUnknown, kNodeGpus[1]},
        {NvmlApi::LinkState::kActive, NvmlApi::RemoteType::kUnknown, "00000000:C0:00.0"}},
       {}},
      {"NVIDIA A100-SXM4-80GB",
       kNodeGpus[1],
       {{NvmlApi::LinkState::kActive, NvmlApi::RemoteType::kUnknown, kNodeGpus[0]},
        {NvmlApi::LinkState::kUnknown, NvmlApi::RemoteType::kUnknown, ""}},
       {}},
      {"NVIDIA A100-SXM4-80GB", kNodeGpus[2], {}, {}},
      {"", "", {}, "nvmlDeviceGetHandleByIndex_v2(3) failed: Insufficient Permissions (4)"}};
  nvml.p2p = [](int a, int b) { return a + b == 3 ? Tristate::kNo : Tristate::kUnknown; };
  const GpuTopology topo = discoverNode(&nvml, "", node.sys.root());
  EXPECT_EQ(linkCode(topo.gpuLinks[0][1]), "NV1");
  EXPECT_EQ(topo.gpuLinks[0][2].kind, LinkKind::kSys);      // from sysfs: other socket
  EXPECT_EQ(topo.gpuLinks[0][3].kind, LinkKind::kUnknown);  // GPU3 could not be queried
  EXPECT_EQ(topo.nvswitch, Tristate::kYes);                 // the guessed switch link
  EXPECT_TRUE(anyContains(topo.warnings, "NVML lacks nvmlDeviceGetNvLinkRemoteDeviceType"));
  EXPECT_TRUE(anyContains(topo.warnings, "counted as NVSwitch links"));
  EXPECT_TRUE(anyContains(topo.warnings,
                          "GPU3 cannot be queried: nvmlDeviceGetHandleByIndex_v2(3) failed"));
  EXPECT_TRUE(anyContains(topo.warnings, "some NVLink states could not be read"));
  const Classification c = classify(topo);
  EXPECT_TRUE(anyContains(c.warnings, "no CUDA peer-to-peer access between GPU0-GPU3, GPU1-GPU2"));
  EXPECT_TRUE(anyContains(c.warnings, "3 of 6 GPU pairs have no link information"));
}

}  // namespace
}  // namespace fabricmap::topologies
