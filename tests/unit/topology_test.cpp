// GPU topology: `nvidia-smi topo -m` parsing (real fixtures with labels and synthetic outputs for
// every class and format quirk), classification and its edge cases, nearest NIC and the GPUDirect
// warning, reference specs, sysfs and NVML discovery against fakes, and `fabricmap topo`'s output.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"
#include "orchestrator/commands.h"
#include "topologies/classify.h"
#include "topologies/discovery.h"
#include "topologies/nvml.h"
#include "topologies/smi_topo_parser.h"
#include "topologies/specs.h"
#include "topologies/sysfs.h"
#include "topologies/topology_json.h"

namespace fabricmap::topologies {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// tests/data/topo beside this file's folder: the fixtures travel with the source tree.
fs::path dataDir() { return fs::path(__FILE__).parent_path().parent_path() / "data" / "topo"; }

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "fabricmap-topo-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void writeFile(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const core::UsageError& e) {
    EXPECT_EQ(e.code(), core::ExitCode::kUsage);
    return e.what();
  }
  ADD_FAILURE() << "no UsageError";
  return {};
}

bool anyContains(const std::vector<std::string>& lines, const std::string& part) {
  for (const std::string& l : lines) {
    if (l.find(part) != std::string::npos) return true;
  }
  return false;
}

// Synthetic `nvidia-smi topo -m` text: GPU rows with `code(a, b)`, NIC columns named `nics` with
// `nicCode(g, n)`, affinity columns, NIC rows and a NIC Legend when the NICs are NICn.
struct SmiSpec {
  int gpus = 0;
  std::function<std::string(int, int)> code = {};
  std::vector<std::string> nics = {};
  std::function<std::string(int, int)> nicCode = [](int, int) { return std::string("SYS"); };
  std::string sep = "\t";
  bool affinity = true;
  std::vector<std::string> legend = {};  // device names for a "NIC Legend"; empty: none
};

std::string smiText(const SmiSpec& s) {
  std::string out;
  for (int g = 0; g < s.gpus; ++g) out += s.sep + fmt::format("GPU{}", g);
  for (const std::string& n : s.nics) out += s.sep + n;
  if (s.affinity) out += s.sep + "CPU Affinity" + s.sep + "NUMA Affinity" + s.sep + "GPU NUMA ID";
  out += "\n";
  for (int a = 0; a < s.gpus; ++a) {
    out += fmt::format("GPU{}", a);
    for (int b = 0; b < s.gpus; ++b) out += s.sep + (a == b ? std::string(" X ") : s.code(a, b));
    for (int n = 0; n < static_cast<int>(s.nics.size()); ++n) out += s.sep + s.nicCode(a, n);
    if (s.affinity)
      out += s.sep + (a < s.gpus / 2 || s.gpus == 1 ? "0-31" : "32-63") + s.sep +
             (a < s.gpus / 2 || s.gpus == 1 ? "0" : "1") + s.sep + "N/A";
    out += "\n";
  }
  for (int n = 0; n < static_cast<int>(s.nics.size()); ++n) {
    out += s.nics[n];
    for (int g = 0; g < s.gpus; ++g) out += s.sep + s.nicCode(g, n);
    for (int m = 0; m < static_cast<int>(s.nics.size()); ++m) out += s.sep + (n == m ? "X" : "SYS");
    out += "\n";
  }
  out += "\nLegend:\n\n  X    = Self\n  NV#  = Connection traversing a bonded set of # NVLinks\n";
  if (!s.legend.empty()) {
    out += "\nNIC Legend:\n\n";
    for (std::size_t n = 0; n < s.legend.size(); ++n)
      out += fmt::format("  NIC{}: {}\n", n, s.legend[n]);
  }
  return out;
}

std::function<std::string(int, int)> all(const std::string& code) {
  return [code](int, int) { return code; };
}

Classification classifyText(const SmiSpec& s) { return classify(parseSmiTopo(smiText(s))); }

// ---------------------------------------------------------------- fixtures with labels

std::string unquote(std::string field) {
  if (field.size() >= 2 && field.front() == '"' && field.back() == '"') {
    field = field.substr(1, field.size() - 2);
    for (std::size_t i = field.find("\"\""); i != std::string::npos;
         i = field.find("\"\"", i + 1)) {
      field.erase(i, 1);
    }
  }
  return field;
}

std::vector<std::map<std::string, std::string>> readLabels() {
  std::ifstream in(dataDir() / "labels.tsv");
  std::vector<std::map<std::string, std::string>> rows;
  std::vector<std::string> header;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();  // the file has CRLF line ends
    std::vector<std::string> fields;
    std::stringstream split(line);
    std::string field;
    while (std::getline(split, field, '\t')) fields.push_back(unquote(field));
    if (header.empty()) {
      header = fields;
      continue;
    }
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
    rows.push_back(row);
  }
  return rows;
}

GpuTopology fixture(const std::string& name) {
  return readSmiTopoFile((dataDir() / name).string());
}

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
  EXPECT_TRUE(anyContains(c.warnings, "GPU0's nearest NIC mlx5_0 is NODE"));
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
  for (int g = 0; g < 8; ++g) {
    EXPECT_EQ(c.nearestNics[g].path, LinkKind::kSys);
    EXPECT_TRUE(anyContains(c.warnings, fmt::format("GPU{}'s nearest NIC NIC0 is SYS", g)));
  }
}

// ---------------------------------------------------------------- synthetic classes and edge cases

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

// ---------------------------------------------------------------- format quirks

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

// ---------------------------------------------------------------- reference specs

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

// ---------------------------------------------------------------- sysfs and discovery

// A fake /sys: PCI devices under root complexes with their bus links, RDMA devices with ports,
// network interfaces (physical, behind RDMA devices, virtio, virtual).
class FakeSysfs {
 public:
  const fs::path& root() const { return dir_.path(); }

  // chain: root port ... device; returns the device's directory
  fs::path addPci(const std::string& rootComplex, const std::vector<std::string>& chain,
                  std::map<std::string, std::string> attributes = {}) {
    fs::path dir = root() / "devices" / rootComplex;
    for (const std::string& f : chain) {
      dir /= f;
      fs::create_directories(dir);
      const fs::path link = root() / "bus/pci/devices" / f;
      fs::create_directories(link.parent_path());
      if (!fs::exists(fs::symlink_status(link))) fs::create_directory_symlink(dir, link);
    }
    for (const auto& [name, value] : attributes) writeFile(dir / name, value + "\n");
    return dir;
  }

  void addIb(const std::string& name, const fs::path& pciDir,
             const std::vector<std::map<std::string, std::string>>& ports,
             const std::vector<std::string>& netdevs = {}) {
    const fs::path dev = pciDir / "infiniband" / name;
    fs::create_directories(dev);
    fs::create_directory_symlink(pciDir, dev / "device");
    for (std::size_t p = 0; p < ports.size(); ++p) {
      for (const auto& [attr, value] : ports[p])
        writeFile(dev / "ports" / std::to_string(p + 1) / attr, value + "\n");
    }
    fs::create_directories(root() / "class/infiniband");
    fs::create_directory_symlink(dev, root() / "class/infiniband" / name);
    for (const std::string& n : netdevs) addNet(n, pciDir, {{"type", "1"}, {"operstate", "up"}});
  }

  void addNet(const std::string& name, const std::optional<fs::path>& deviceDir,
              const std::map<std::string, std::string>& attributes) {
    const fs::path dev = (deviceDir ? *deviceDir : root() / "devices/virtual") / "net" / name;
    fs::create_directories(dev);
    if (deviceDir) fs::create_directory_symlink(*deviceDir, dev / "device");
    for (const auto& [attr, value] : attributes) writeFile(dev / attr, value + "\n");
    fs::create_directories(root() / "class/net");
    fs::create_directory_symlink(dev, root() / "class/net" / name);
  }

 private:
  TempDir dir_;
};

// Two sockets. Socket 0: root complex pci0000:17 with a PCIe switch holding GPU0, GPU1 and
// mlx5_0 (400G IB); socket 1: pci0000:97 with GPU2, GPU3 under one switch and mlx5_1 (RoCE, port 1
// down, port 2 active) under another switch behind the same root port. A virtio NIC and lo.
struct TwoSocketNode {
  FakeSysfs sys;
  TwoSocketNode() {
    const std::map<std::string, std::string> gpu0 = {
        {"vendor", "0x10de"}, {"class", "0x030200"}, {"numa_node", "0"}, {"local_cpulist", "0-31"}};
    const std::map<std::string, std::string> gpu1 = {{"vendor", "0x10de"},
                                                     {"class", "0x030200"},
                                                     {"numa_node", "1"},
                                                     {"local_cpulist", "32-63"}};
    sys.addPci("pci0000:17", {"0000:17:00.0", "0000:18:00.0", "0000:19:00.0", "0000:1a:00.0"},
               gpu0);
    sys.addPci("pci0000:17", {"0000:17:00.0", "0000:18:00.0", "0000:19:01.0", "0000:1b:00.0"},
               gpu0);
    const fs::path nic0 =
        sys.addPci("pci0000:17", {"0000:17:00.0", "0000:18:00.0", "0000:19:02.0", "0000:1c:00.0"},
                   {{"numa_node", "0"}, {"vendor", "0x15b3"}, {"class", "0x020700"}});
    sys.addIb(
        "mlx5_0", nic0,
        {{{"rate", "400 Gb/sec (4X NDR)"}, {"link_layer", "InfiniBand"}, {"state", "4: ACTIVE"}}},
        {"ib0"});
    sys.addPci("pci0000:97", {"0000:97:00.0", "0000:98:00.0", "0000:99:00.0", "0000:9a:00.0"},
               gpu1);
    sys.addPci("pci0000:97", {"0000:97:00.0", "0000:98:00.0", "0000:99:01.0", "0000:9b:00.0"},
               gpu1);
    const fs::path nic1 =
        sys.addPci("pci0000:97",
                   {"0000:97:00.0", "0000:98:00.0", "0000:99:02.0", "0000:a0:00.0", "0000:a1:00.0",
                    "0000:a2:00.0"},
                   {{"numa_node", "1"}, {"vendor", "0x15b3"}, {"class", "0x020000"}});
    sys.addIb(
        "mlx5_1", nic1,
        {{{"rate", "40 Gb/sec (4X QDR)"}, {"link_layer", "Ethernet"}, {"state", "1: DOWN"}},
         {{"rate", "100 Gb/sec (4X EDR)"}, {"link_layer", "Ethernet"}, {"state", "4: ACTIVE"}}},
        {"ens3f0"});
    const fs::path virtioPci = sys.addPci("pci0000:00", {"0000:00:03.0"}, {{"numa_node", "-1"}});
    fs::create_directories(virtioPci / "virtio0");
    sys.addNet("eth0", virtioPci / "virtio0",
               {{"type", "1"}, {"speed", "25000"}, {"operstate", "up"}});
    sys.addNet("lo", std::nullopt, {{"type", "772"}, {"operstate", "unknown"}});
  }
};

TEST(TopoSysfs, BusIdsAndRates) {
  EXPECT_EQ(sysfsBusId("00000000:1B:00.0"), "0000:1b:00.0");
  EXPECT_EQ(sysfsBusId("0000:1b:00.0"), "0000:1b:00.0");
  EXPECT_EQ(sysfsBusId("00010000:E0:00.0"), "10000:e0:00.0");
  EXPECT_EQ(parseIbRate("400 Gb/sec (4X NDR)"), 400.0);
  EXPECT_EQ(parseIbRate("2.5 Gb/sec (1X SDR)"), 2.5);
  EXPECT_FALSE(parseIbRate("").has_value());
  EXPECT_FALSE(parseIbRate("fast").has_value());
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
  const GpuTopology topo = discoverNode(&nvml, "", node.sys.root());
  ASSERT_EQ(topo.gpuCount(), 4);
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

// ---------------------------------------------------------------- `fabricmap topo`

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
