// `fabricmap import nccl-tests LOG... -o FILE.h5 [--force] [--op OP]`: providers' nccl-tests logs
// into a results file of schema v1, so every reader (show, report, compare, predict) takes them
// like a run. Every log is parsed before anything is written; the file appears only when whole.
#include <boost/program_options.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/config.h"
#include "core/error.h"
#include "core/files.h"
#include "core/text.h"
#include "core/units.h"
#include "orchestrator/commands.h"
#include "orchestrator/command_line.h"
#include "orchestrator/verdicts/compare.h"
#include "orchestrator/run/provenance.h"
#include "results/h5_writer.h"
#include "results/journal.h"
#include "results/nccl_tests_log.h"
#include "topologies/classify.h"
#include "topologies/node_records.h"
#include "topologies/smi_topo_parser.h"
#include "topologies/specs.h"

namespace fabricmap::orchestrator {
namespace {

constexpr const char* kUsage =
    "usage: fabricmap import nccl-tests LOG... -o FILE.h5 [--topo TOPO.txt] [--force] [--op OP]";

// A log over this is not one nccl-tests wrote (a week-long sweep of every size prints a few MB).
constexpr std::size_t kMaxLogBytes = 64u << 20;

std::string readLog(const std::string& path) {
  std::string text = core::readUserFile(path, "nccl-tests log", kMaxLogBytes);
  if (text.size() > kMaxLogBytes) {
    throw core::UsageError(fmt::format("{}: larger than {}, not an nccl-tests log", core::printable(path, 256),
                                       core::formatBytes(kMaxLogBytes)));
  }
  return text;
}

std::string peakText(const PlacementPeak& p) {
  if (!std::isfinite(p.busbw)) return "-";
  return fmt::format("{:.2f} GB/s at {}", p.busbw, core::formatBytes(p.bytes));
}

// nccl-tests' -a as an echoed command gave it: whose time a row shows; "" when not echoed.
std::string averageText(int average) {
  constexpr std::array<const char*, 4> kWhose = {"rank 0", "mean over ranks", "fastest rank", "slowest rank"};
  if (average < 0 || average > 3) return "";
  return fmt::format(", times -a {} ({})", average, kWhose.at(static_cast<std::size_t>(average)));
}

// What the log says of its results' correctness. nccl-tests prints "Out of bounds values : 0 OK"
// also when it checked nothing (-c 0: every row's error column N/A), so that line is quoted only
// where a row was checked.
std::string checkText(const results::NcclTestsTable& table) {
  const bool checked = std::any_of(table.rows.begin(), table.rows.end(), [](const results::NcclTestsRow& r) {
    return r.outOfPlace.checked || r.inPlace.checked;
  });
  if (!checked) return "results not checked (-c 0: the log's error column is N/A)";
  return table.outOfBounds.empty() ? "no verdict (cut short)" : "out of bounds " + table.outOfBounds;
}

// What each table became: its rows, sizes, nccl-tests' verdict and the peaks `compare` reads.
void printTables(const std::vector<results::NcclTestsLog>& logs, const results::NcclTestsImport& imported) {
  std::size_t next = 0;
  for (const auto& log : logs) {
    for (const auto& table : log.tables) {
      const core::ImportRecord& record = imported.imported.at(next++);
      std::vector<core::CollectiveRecord> rows;
      for (int step = record.firstStep; step <= record.lastStep; ++step) {
        const auto& stepRows = imported.steps.at(static_cast<std::size_t>(step)).second;
        rows.insert(rows.end(), stepRows.begin(), stepRows.end());
      }
      const CollectivePeak peak = peakOf(rows, "world", table.op);
      const std::string average = averageText(table.average);
      fmt::print("# {}:{}: {} ({} ranks), {} rows {}..{}{}, {}{}; peak busbw out-of-place {}, in-place {}\n",
                 log.name, table.headerLine, table.op, table.ranks.size(), table.rows.size(),
                 core::formatBytes(table.rows.front().bytes), core::formatBytes(table.rows.back().bytes), average,
                 checkText(table),
                 table.wrongResults > 0 ? fmt::format(", {} wrong", table.wrongResults) : "",
                 peakText(peak.outOfPlace), peakText(peak.inPlace));
    }
  }
}

// The GPU memory a log does not print, from the GPU names it does (topologies/specs.h); a name
// that does not tell it leaves it unknown.
void memoryFromNames(core::Topology& topology) {
  for (core::RankRecord& r : topology.ranks) {
    if (r.gpuMemoryBytes > 0) continue;
    if (const auto bytes = topologies::gpuMemoryFromName(r.gpuName)) r.gpuMemoryBytes = *bytes;
  }
}

// A saved matrix whose pair shows more NVLinks than the log's GPU model has (NV18 between two
// A100s, which have 12) is another server's: refused rather than classified, whatever it shows.
void refuseForeignLinks(const topologies::GpuTopology& t, const std::string& path) {
  for (int a = 0; a < t.gpuCount(); ++a) {
    const std::optional<topologies::GpuSpec> spec = topologies::gpuSpecForName(t.gpus[static_cast<std::size_t>(a)].name);
    if (!spec) continue;
    for (int b = 0; b < t.gpuCount(); ++b) {
      const topologies::Link& link = t.gpuLinks[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)];
      if (a == b || link.kind != topologies::LinkKind::kNvLink || link.nvlinks <= spec->nvlinksPerGpu) continue;
      throw core::UsageError(fmt::format(
          "--topo {}: NV{} between GPU{} and GPU{}, more NVLinks than the log's {} has ({}): not that server's topology",
          core::printable(path, 256), link.nvlinks, a, b, spec->model, spec->nvlinksPerGpu));
    }
  }
}

// --topo: a saved `nvidia-smi topo -m` of the servers the logs ran on gives every node its GPU
// links, NICs and class, classified as `fabricmap topo --file` does (with the log's GPU names, so
// a model's own link count is known). A node that ran more ranks than the file has GPUs, or links
// its GPU model cannot have, are not that server: refused.
void attachTopology(core::Topology& topology, const std::string& path) {
  topologies::GpuTopology t = topologies::readSmiTopoFile(path);
  if (t.gpuCount() == 0) throw core::UsageError(fmt::format("--topo {}: no GPU in it", core::printable(path, 256)));
  for (const core::RankRecord& r : topology.ranks) {
    if (r.gpuIndex >= 0 && r.gpuIndex < t.gpuCount() && t.gpus[static_cast<std::size_t>(r.gpuIndex)].name.empty())
      t.gpus[static_cast<std::size_t>(r.gpuIndex)].name = r.gpuName;
  }
  refuseForeignLinks(t, path);
  const nlohmann::ordered_json description = topologies::describeNode(t, topologies::classify(t));
  for (core::NodeRecord& n : topology.nodes) {
    if (n.ranks > t.gpuCount()) {
      throw core::UsageError(fmt::format("--topo {}: {} GPUs, but the logs ran {} ranks on {}: not that server's topology",
                                         core::printable(path, 256), t.gpuCount(), n.ranks, n.hostname));
    }
    topologies::applyNodeDescription(topology, n.node, description, {});
    n.topologyWarnings = fmt::format("links from {} (nvidia-smi topo -m){}", core::printable(path, 256),
                                     n.topologyWarnings.empty() ? "" : "; " + n.topologyWarnings);
  }
  // a saved matrix has no NVML figures: the GPUs' inventory rows it would add hold nothing
  topology.inventory.gpus.clear();
}

std::string commandLine(const std::vector<std::string>& args) {
  std::vector<std::string> words{"fabricmap", "import"};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  return shellJoin(static_cast<int>(argv.size()), argv.data());
}

}  // namespace

int importCommand(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  po::options_description opts("fabricmap import options");
  opts.add_options()("help,h", "show this help")(
      "output,o", po::value<std::string>(), "results file to write")(
      "topo", po::value<std::string>(),
      "a saved `nvidia-smi topo -m` of the server(s) the logs ran on: every node takes its GPU links, NICs and "
      "class (fabricmap topo --file)")(
      "force", "replace FILE.h5 when it exists")(
      "op", po::value<std::string>(),
      "collective of logs that do not name theirs (no '# Collective test starting' line, no *_perf command, "
      "no op in the file name): all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, "
      "sendrecv, gather, scatter, hypercube");
  po::options_description hidden;
  hidden.add_options()("format", po::value<std::string>(), "log format: nccl-tests")(
      "logs", po::value<std::vector<std::string>>(), "logs to import");
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description positional;
  positional.add("format", 1).add("logs", -1);
  const po::variables_map vm = parseCommandLine(args, all, positional, kUsage);
  if (vm.count("help")) {
    std::cout << kUsage << "\n\n" << opts;
    return 0;
  }
  if (!vm.count("format")) throw core::UsageError(fmt::format("no log format given ({})", kUsage));
  const std::string format = vm["format"].as<std::string>();
  if (format != "nccl-tests") {
    throw core::UsageError(fmt::format("unknown log format '{}': fabricmap imports nccl-tests ({})", format, kUsage));
  }
  if (!vm.count("logs")) throw core::UsageError(fmt::format("no logs given ({})", kUsage));
  if (!vm.count("output")) throw core::UsageError(fmt::format("no output file given: -o FILE.h5 ({})", kUsage));
  const std::string output = vm["output"].as<std::string>();
  const std::string opHint = vm.count("op") ? vm["op"].as<std::string>() : "";
  if (!opHint.empty() && results::ncclTestsOp(opHint).empty()) {
    throw core::UsageError(fmt::format("--op {}: not an nccl-tests collective", opHint));
  }
  const auto logNames = vm["logs"].as<std::vector<std::string>>();
  std::vector<std::string> inputs = logNames;
  if (vm.count("topo")) inputs.push_back(vm["topo"].as<std::string>());
  const bool force = vm.count("force") > 0;
  std::error_code ec;
  const std::string journal = results::journalPath(output);
  if (!force && std::filesystem::exists(journal, ec)) {
    throw core::UsageError(fmt::format("'{}' holds a run's journal: pass --force to replace that run", journal));
  }
  const core::OutputLock lock =
      core::claimOutput(output, {.what = "results file", .replace = force, .inputs = inputs}, "fabricmap import");

  std::vector<results::NcclTestsLog> logs;
  for (const auto& name : logNames) logs.push_back(results::parseNcclTestsLog(readLog(name), name, opHint));
  results::NcclTestsImport imported = results::importNcclTests(logs);
  memoryFromNames(imported.topology);
  if (vm.count("topo")) attachTopology(imported.topology, vm["topo"].as<std::string>());
  for (const auto& log : logs) {
    for (const auto& w : log.warnings) fmt::print(stderr, "fabricmap import: warning: {}\n", w);
  }

  core::Provenance p;
  p.toolVersion = FABRICMAP_VERSION;
  p.gitRevision = FABRICMAP_GIT_REVISION;
  p.createdUtc = utcNow(false);
  p.commandLine = commandLine(args);
  p.backend = "nccl-tests (imported)";
  p.ncclVersion = imported.ncclVersion;
  std::string hosts;
  for (const auto& node : imported.topology.nodes) hosts += (hosts.empty() ? "" : ",") + node.hostname;
  p.hostnames = hosts;
  p.worldSize = static_cast<int>(imported.topology.ranks.size());
  p.nodeCount = static_cast<int>(imported.topology.nodes.size());
  p.plannedSteps = static_cast<int>(imported.steps.size());
  p.importedFrom = nlohmann::json(logNames).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);

  // a journal beside the file would be read instead of it (the replaced run's, under --force)
  std::filesystem::remove(journal, ec);
  // written under FILE.h5.new and renamed by finish(): a failed import leaves no FILE.h5
  results::H5Sink sink(output, results::Publish::kWhenAsked);
  sink.begin(p, imported.topology, {imported.scope});
  for (const auto& [step, rows] : imported.steps) sink.step(step, rows);
  sink.imported(imported.imported);
  sink.finish(true);
  printTables(logs, imported);
  int rows = 0;
  for (const auto& i : imported.imported) rows += i.rows;
  fmt::print("# imported {} table{} ({} rows, {} steps) from {} log{} into {}\n", imported.imported.size(),
             imported.imported.size() == 1 ? "" : "s", rows, imported.steps.size(), logs.size(),
             logs.size() == 1 ? "" : "s", output);
  return 0;
}

}  // namespace fabricmap::orchestrator
