// `fabricmap topo [--file TOPO.txt] [--json]`: discover (or parse a saved `nvidia-smi topo -m`)
// and classify one node, as text for people or JSON (topologies/README.md) for scripts. No MPI.
#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <iostream>
#include <sstream>

#include "core/error.h"
#include "core/files.h"
#include "orchestrator/commands.h"
#include "topologies/classify.h"
#include "topologies/discovery.h"
#include "topologies/smi_topo_parser.h"
#include "topologies/topology_json.h"

namespace fabricmap::orchestrator {
namespace {

namespace topo = topologies;

constexpr const char* kTopoUsage = "usage: fabricmap topo [--file TOPO.txt] [--json]";

std::string orDash(const std::string& value) { return value.empty() ? "-" : value; }

std::string gpuLine(const topo::GpuTopology& t, const topo::Classification& c,
                    const topo::GpuInfo& gpu) {
  std::string line = fmt::format("  GPU{:<3} {}", gpu.index, orDash(gpu.name));
  if (!gpu.pciBusId.empty()) line += "  " + gpu.pciBusId;
  if (gpu.memoryBytes > 0)
    line += fmt::format("  {:.1f} GiB", static_cast<double>(gpu.memoryBytes) / (1u << 30));
  if (gpu.numaNode >= 0) line += fmt::format("  NUMA {}", gpu.numaNode);
  if (!gpu.cpuAffinity.empty()) line += "  CPUs " + gpu.cpuAffinity;
  const topo::NearestNic& near = c.nearestNics[static_cast<std::size_t>(gpu.index)];
  if (near.nic >= 0) {
    line += fmt::format("  nearest NIC {} ({}{})", t.nics[static_cast<std::size_t>(near.nic)].name,
                        topo::linkKindName(near.path), near.gpuDirect ? ", GPUDirect RDMA" : "");
  }
  return line + "\n";
}

// The matrix as `nvidia-smi topo -m` prints it: GPU rows, GPU then NIC columns.
std::string matrix(const topo::GpuTopology& t) {
  std::vector<std::string> columns;
  for (const topo::GpuInfo& gpu : t.gpus) columns.push_back(fmt::format("GPU{}", gpu.index));
  for (const topo::NicInfo& nic : t.nics) columns.push_back(nic.name);
  std::size_t width = 6;
  for (const std::string& c : columns) width = std::max(width, c.size() + 2);
  std::string out = fmt::format("  {:<{}}", "", width);
  for (const std::string& c : columns) out += fmt::format("{:<{}}", c, width);
  out += "\n";
  for (int a = 0; a < t.gpuCount(); ++a) {
    out += fmt::format("  {:<{}}", columns[a], width);
    for (int b = 0; b < t.gpuCount(); ++b)
      out += fmt::format("{:<{}}", topo::linkCode(t.gpuLinks[a][b]), width);
    for (std::size_t n = 0; n < t.nics.size(); ++n) {
      out += fmt::format("{:<{}}", topo::linkCode({t.gpuNic[a][n], 0, topo::Tristate::kUnknown}),
                         width);
    }
    out += "\n";
  }
  // columns are padded on the right; no trailing blanks at line ends
  std::string trimmed;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    trimmed += line.substr(0, line.find_last_not_of(' ') + 1) + "\n";
  }
  return trimmed;
}

std::string text(const topo::GpuTopology& t, const topo::Classification& c,
                 const std::string& origin) {
  std::ostringstream out;
  out << fmt::format("source: {} ({})\n", topo::sourcesName(t.sources), origin);
  out << fmt::format("class: {}: {}\n", topo::className(c.topologyClass), c.summary);
  out << fmt::format("nvswitch: {} ({})\n", topo::tristateName(c.nvswitch), c.nvswitchEvidence);
  out << fmt::format("\nGPUs: {}\n", t.gpuCount());
  for (const topo::GpuInfo& gpu : t.gpus) out << gpuLine(t, c, gpu);
  if (t.gpuCount() > 0) out << "\nlinks:\n" << matrix(t);
  out << fmt::format("\nNICs: {}\n", t.nics.size());
  for (const topo::NicInfo& nic : t.nics) {
    std::string line = fmt::format("  {:<10}", nic.name);
    line += nic.rateGbps > 0 ? fmt::format("  {:g} Gb/s", nic.rateGbps) : "  rate -";
    line += fmt::format("  {}", nic.linkLayer == topo::LinkLayer::kUnknown
                                    ? "-"
                                    : topo::linkLayerName(nic.linkLayer));
    if (!nic.state.empty()) line += "  " + nic.state;
    if (!nic.netdev.empty()) line += "  (" + nic.netdev + ")";
    if (!nic.pciBusId.empty()) line += "  " + nic.pciBusId;
    if (nic.numaNode >= 0) line += fmt::format("  NUMA {}", nic.numaNode);
    if (!nic.rdma) line += "  no RDMA";
    out << line << "\n";
  }
  if (!c.warnings.empty()) {
    out << fmt::format("\nwarnings: {}\n", c.warnings.size());
    for (const std::string& w : c.warnings) out << "  - " << w << "\n";
  }
  return out.str();
}

}  // namespace

int topoCommand(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  po::options_description opts("fabricmap topo options");
  opts.add_options()("help,h", "show this help")(
      "file", po::value<std::string>(),
      "parse this saved `nvidia-smi topo -m` output instead of discovering")(
      "json", "print JSON (documented in topologies/README.md)")(
      "sysfs-root", po::value<std::string>()->default_value("/sys"),
      "where discovery reads sysfs (tests point it at a fake tree)");
  po::variables_map vm;
  try {
    // no positional arguments: an empty description makes boost reject them instead of dropping
    // them
    const po::positional_options_description none;
    refusePlaceholders(args);
    po::store(po::command_line_parser(args).options(opts).positional(none).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw core::UsageError(fmt::format("{} ({})", e.what(), kTopoUsage));
  }
  if (vm.count("help")) {
    std::cout << kTopoUsage << "\n\n" << opts;
    return 0;
  }
  topo::GpuTopology t;
  std::string origin;
  if (vm.count("file")) {
    origin = "file " + vm["file"].as<std::string>();
    t = topo::readSmiTopoFile(vm["file"].as<std::string>());
  } else {
    topo::DiscoveryOptions options;
    options.sysfsRoot = vm["sysfs-root"].as<std::string>();
    core::requireDirectory(options.sysfsRoot, "--sysfs-root");
    t = topo::discoverLocalNode(options);
    origin = "discovered on " + (t.hostname.empty() ? std::string("this host") : t.hostname);
  }
  const topo::Classification c = topo::classify(t);
  if (vm.count("json")) {
    std::cout << topo::topologyToJson(t, c).dump(2, ' ', false,
                                                 nlohmann::json::error_handler_t::replace)
              << '\n';
  } else {
    std::cout << text(t, c, origin);
  }
  return 0;
}

}  // namespace fabricmap::orchestrator
