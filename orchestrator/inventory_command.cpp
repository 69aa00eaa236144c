// `fabricmap inventory [--sysfs-root DIR] [--interval S] [--json]`: this node's RDMA ports, Ethernet
// NICs, PCIe links and GPUDirect readiness from sysfs (topologies/inventory.h), judged by the
// inventory rules (orchestrator/analysis/inventory_rules.h). No MPI. With --interval the port
// error counters are read twice, S seconds apart, and what grew is judged too.
#include <unistd.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/files.h"
#include "core/units.h"
#include "orchestrator/analysis/inventory_rules.h"
#include "orchestrator/commands.h"
#include "results/json.h"
#include "topologies/classify.h"
#include "topologies/cuda_driver.h"
#include "topologies/discovery.h"
#include "topologies/inventory.h"
#include "topologies/inventory_records.h"
#include "topologies/node_records.h"

namespace fabricmap::orchestrator {
namespace {

namespace topo = topologies;
using Json = nlohmann::ordered_json;

constexpr const char* kInventoryUsage = "usage: fabricmap inventory [--sysfs-root DIR] [--interval S] [--json]";

std::string hostName() {
  char name[256] = {};
  return gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string("this node");
}

std::string numaText(int numa) { return numa >= 0 ? fmt::format("NUMA {}", numa) : "NUMA -"; }

std::string portLine(const topo::NicPort& p) {
  std::string line = fmt::format("  {:<8} port {}  {:<6} {:<8}", p.device, p.port, p.state.empty() ? "-" : p.state,
                                 p.physState.empty() ? "-" : p.physState);
  line += p.rateGbps > 0 ? fmt::format("  {:g} Gb/s", p.rateGbps) : "  rate -";
  if (p.width > 0) line += fmt::format(" ({}X {})", p.width, p.speed);
  line += fmt::format("  {}", topo::linkLayerName(p.linkLayer));
  if (!p.netdev.empty()) line += "  " + p.netdev;
  line += "  " + (p.pciBusId.empty() ? std::string("-") : p.pciBusId) + "  " + numaText(p.numaNode);
  return line + "\n";
}

std::string pcieLine(const topo::PcieLink& l) {
  const auto gen = [](double speed, int width) {
    return speed > 0 && width > 0 ? fmt::format("x{} {:g} GT/s", width, speed) : std::string("unknown");
  };
  std::string line = fmt::format("  {:<8} {}  {} of {}", l.device, l.busId, gen(l.speedGTs, l.width),
                                 gen(l.maxSpeedGTs, l.maxWidth));
  if (l.slotMaxSpeedGTs > 0 && l.slotMaxWidth > 0) line += fmt::format(" (slot {})", gen(l.slotMaxSpeedGTs, l.slotMaxWidth));
  return line + "  " + numaText(l.numaNode) + "\n";
}

// This machine's GPUs as NVML describes them (/inventory/gpus rows); none for a saved tree, which
// is another machine's.
std::vector<core::GpuInventoryRecord> localGpus(const std::string& root) {
  std::error_code ec;
  if (!std::filesystem::equivalent(root, "/sys", ec)) return {};
  const topo::GpuTopology gpus = topo::discoverLocalNode();
  return topo::gpuInventoryRows(topo::describeNode(gpus, topo::classify(gpus)), 0);
}

std::string gpuLine(const core::GpuInventoryRecord& g) {
  const auto count = [](int n) { return n >= 0 ? std::to_string(n) : std::string("-"); };
  return fmt::format("  GPU {:<2} {}  {}  {}  {}  NIC {}{}  ECC {}  retired pages {}/{} (pending {})  remapped rows "
                     "{}/{} (pending {}, failed {})\n",
                     g.index, g.busId.empty() ? "-" : g.busId, g.name.empty() ? "-" : g.name,
                     g.memoryBytes > 0 ? core::formatBytes(g.memoryBytes) : "memory -", numaText(g.numaNode),
                     g.nic.empty() ? "-" : g.nic, g.nicPath.empty() ? "" : " (" + g.nicPath + ")", g.ecc,
                     count(g.retiredSingleBit), count(g.retiredDoubleBit), g.retirePending,
                     count(g.remappedCorrectable), count(g.remappedUncorrectable), g.remapPending, g.remapFailed);
}

std::string text(const std::string& node, const std::string& root, const topo::Inventory& inv,
                 const std::vector<core::GpuInventoryRecord>& gpus, const std::vector<core::Finding>& findings) {
  std::ostringstream out;
  out << fmt::format("node: {} (sysfs {})\n", node, root);
  if (inv.ports.empty()) {
    out << "\nRDMA ports: none (no RDMA NIC)\n";
  } else {
    out << fmt::format("\nRDMA ports: {}\n", inv.ports.size());
    for (const topo::NicPort& p : inv.ports) out << portLine(p);
  }
  out << fmt::format("\nEthernet NICs without RDMA: {}\n", inv.ethernet.size());
  for (const topo::EthernetNic& e : inv.ethernet) {
    out << fmt::format("  {:<10} {}  {}  {}  {}\n", e.name, e.rateGbps > 0 ? fmt::format("{:g} Gb/s", e.rateGbps) : "rate -",
                       e.state.empty() ? "-" : e.state, e.pciBusId.empty() ? "-" : e.pciBusId, numaText(e.numaNode));
  }
  out << fmt::format("\nGPUs on the PCI bus: {}\nPCIe links (current of maximum): {}\n", inv.gpus, inv.pcie.size());
  for (const topo::PcieLink& l : inv.pcie) out << pcieLine(l);
  out << fmt::format("\nGPUs as NVML describes them (retired pages single/double-bit, remapped rows correctable/"
                     "uncorrectable): {}\n",
                     gpus.size());
  for (const core::GpuInventoryRecord& g : gpus) out << gpuLine(g);
  out << fmt::format("\nGPUDirect RDMA: {} ({})\n", topo::tristateName(inv.gpuDirect.ready), inv.gpuDirect.how);
  for (const std::string& n : inv.notes) out << "note: " << n << "\n";
  out << fmt::format("\nfindings: {}\n", findings.size());
  for (const core::Finding& f : findings) {
    out << fmt::format("  {:<7} {:<17} {}\n", core::name(f.severity), core::name(f.kind), f.message);
  }
  return out.str();
}

Json json(const std::string& node, const std::string& root, const topo::Inventory& inv,
          const std::vector<core::GpuInventoryRecord>& gpus, const std::vector<core::Finding>& findings) {
  Json j{{"node", node}, {"sysfs_root", root}};
  j.update(topo::inventoryJson(inv));
  j["gpu_list"] = results::gpuInventoryJson(gpus);
  j["findings"] = results::findingsJson(findings);
  return j;
}

}  // namespace

int inventoryCommand(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  po::options_description opts("fabricmap inventory options");
  opts.add_options()("help,h", "show this help")("json", "print JSON (documented in topologies/README.md)")(
      "sysfs-root", po::value<std::string>()->default_value("/sys"),
      "read this sysfs tree (a saved copy of a node's /sys) instead of /sys")(
      "interval", po::value<double>()->default_value(0),
      "read the RDMA ports' error counters twice, this many seconds apart, and judge what grew (0: once)");
  po::variables_map vm;
  try {
    const po::positional_options_description none;
    refusePlaceholders(args);
    po::store(po::command_line_parser(args).options(opts).positional(none).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw core::UsageError(fmt::format("{} ({})", e.what(), kInventoryUsage));
  }
  if (vm.count("help")) {
    std::cout << kInventoryUsage << "\n\n" << opts;
    return 0;
  }
  const double interval = vm["interval"].as<double>();
  if (!(interval >= 0 && interval <= 86400)) {
    throw core::UsageError(fmt::format("--interval {} is not 0..86400 seconds ({})", interval, kInventoryUsage));
  }
  const std::string root = vm["sysfs-root"].as<std::string>();
  core::requireDirectory(root, "--sysfs-root");
  const topo::Inventory first = topo::readLocalInventory(root);
  const InventorySubject at{hostName(), -1};
  std::vector<core::Finding> findings = inventoryFindings(first, at);
  core::Topology machine;  // this machine's GPUs, judged as a run judges them
  machine.inventory.gpus = localGpus(root);
  machine.nodes.emplace_back().name = at.node;
  const std::vector<core::Finding> health = gpuHealthFindings(machine);
  findings.insert(findings.end(), health.begin(), health.end());
  if (interval > 0) {
    std::this_thread::sleep_for(std::chrono::duration<double>(interval));
    const topo::Inventory second = topo::readInventory(root);
    const std::vector<core::Finding> grown = linkErrorFindings(first, second, at);
    findings.insert(findings.end(), grown.begin(), grown.end());
  }
  if (vm.count("json")) {
    // names read from sysfs are not always UTF-8
    std::cout << json(at.node, root, first, machine.inventory.gpus, findings).dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
  } else {
    std::cout << text(at.node, root, first, machine.inventory.gpus, findings);
  }
  return 0;
}

}  // namespace fabricmap::orchestrator
