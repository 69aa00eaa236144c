// What the topology tests share: temporary directories and files, synthetic `nvidia-smi topo -m`
// text, the labelled fixtures of tests/data/topo, and a fake /sys with a two-socket node.
#pragma once

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

namespace fs = std::filesystem;
using Json = nlohmann::json;

// tests/data/topo: the fixtures travel with the source tree.
inline fs::path dataDir() { return fs::path(FABRICMAP_TEST_DATA) / "topo"; }

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

inline void writeFile(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

inline std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const core::UsageError& e) {
    EXPECT_EQ(e.code(), core::ExitCode::kUsage);
    return e.what();
  }
  ADD_FAILURE() << "no UsageError";
  return {};
}

inline bool anyContains(const std::vector<std::string>& lines, const std::string& part) {
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

inline std::string smiText(const SmiSpec& s) {
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

inline std::function<std::string(int, int)> all(const std::string& code) {
  return [code](int, int) { return code; };
}

inline Classification classifyText(const SmiSpec& s) { return classify(parseSmiTopo(smiText(s))); }

// ---------------------------------------------------------------- fixtures with labels

inline std::string unquote(std::string field) {
  if (field.size() >= 2 && field.front() == '"' && field.back() == '"') {
    field = field.substr(1, field.size() - 2);
    for (std::size_t i = field.find("\"\""); i != std::string::npos;
         i = field.find("\"\"", i + 1)) {
      field.erase(i, 1);
    }
  }
  return field;
}

inline std::vector<std::map<std::string, std::string>> readLabels() {
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

inline GpuTopology fixture(const std::string& name) {
  return readSmiTopoFile((dataDir() / name).string());
}

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

}  // namespace fabricmap::topologies
