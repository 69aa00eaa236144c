// `fabricmap history FILES|DIR... [--json] [--html OUT.html] [--write-baseline history.json]`: many
// runs of a cluster in time order, per node and node pair; files that cannot be read are skipped
// with a warning each. Exit 0, or 2 when no file could be read.
#include <fmt/format.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>
#include <system_error>
#include <utility>

#include "core/config.h"
#include "core/error.h"
#include "core/files.h"
#include "orchestrator/command_line.h"
#include "orchestrator/commands.h"
#include "orchestrator/run/provenance.h"
#include "orchestrator/verdicts/history.h"
#include "results/h5.h"
#include "results/history_reader.h"

namespace fabricmap::orchestrator {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;

constexpr const char* kHistoryUsage =
    "usage: fabricmap history FILES|DIR... [--json] [--html OUT.html] [--write-baseline history.json] [--force]";

// Every *.h5 under a directory (recursively, in name order), or the path itself.
std::vector<std::string> inputsOf(const std::string& path, std::vector<SkippedFile>& skipped) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return {path};
  std::vector<std::string> out;
  fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().extension() == ".h5" && it->is_regular_file(ec)) out.push_back(it->path().string());
  }
  if (ec) skipped.push_back({path, fmt::format("cannot list '{}': {}", path, ec.message())});
  std::sort(out.begin(), out.end());
  return out;
}

struct Collected {
  std::vector<results::RunDigest> runs;
  std::vector<SkippedFile> skipped;
};

// Every results file the arguments name (directories listed), those that cannot be listed skipped.
std::vector<std::string> inputsOf(const std::vector<std::string>& args, std::vector<SkippedFile>& skipped) {
  std::vector<std::string> out;
  for (const std::string& arg : args) {
    for (std::string& path : inputsOf(arg, skipped)) out.push_back(std::move(path));
  }
  return out;
}

Collected collect(const std::vector<std::string>& paths, std::vector<SkippedFile> skipped, bool withCollectives) {
  Collected c;
  c.skipped = std::move(skipped);
  for (const std::string& path : paths) {
    try {
      c.runs.push_back(results::readRunDigest(path, withCollectives));
    } catch (const core::Error& e) {
      c.skipped.push_back({path, e.what()});
    }
  }
  return c;
}

// The one file never to overwrite: a results file (an output named like an input).
void refuseResultsFile(const std::string& output) {
  std::error_code ec;
  if (fs::is_regular_file(output, ec) && results::h5::isHdf5File(output)) {
    throw core::UsageError(fmt::format("refusing to write over the HDF5 file {}", output));
  }
}

// The runs' baseline, written to `path`; what was written, in a line.
std::string writeBaseline(const std::string& path, const std::vector<results::RunDigest>& runs) {
  Baseline b = buildBaseline(runs);
  b.createdUtc = utcNow(false);
  b.toolVersion = FABRICMAP_VERSION;
  core::writeReplacing(path, baselineToJson(b).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  return fmt::format("{}: baseline of {} runs ({} link classes, {} collectives)", path, b.runs, b.classes.size(),
                     b.collectives.size());
}

// No file read: one message, whatever went wrong with each.
core::UsageError nothingRead(const std::vector<SkippedFile>& skipped) {
  if (skipped.size() == 1) return core::UsageError("no readable results file: " + skipped.front().reason);
  return core::UsageError(fmt::format("no readable results file among {} inputs (first: {})", skipped.size(),
                                      skipped.empty() ? "none found" : skipped.front().reason));
}

}  // namespace

int historyCommand(const std::vector<std::string>& args) {
  po::options_description opts("fabricmap history options");
  opts.add_options()("help,h", "show this help")("json", "print JSON (documented in README.md)")(
      "html", po::value<std::string>(), "also write a self-contained HTML page")(
      "write-baseline", po::value<std::string>(),
      "also write the runs' baseline (median and spread per link class and collective) for verify/compare --baseline")(
      "force", "replace the HTML page or baseline when it exists")(
      "file", po::value<std::vector<std::string>>(), "results files or directories (every *.h5 under them)");
  po::positional_options_description positional;
  positional.add("file", -1);
  const po::variables_map vm = parseCommandLine(args, opts, positional, kHistoryUsage);
  if (vm.count("help")) {
    std::cout << kHistoryUsage << "\n\n" << opts;
    return 0;
  }
  if (!vm.count("file")) throw core::UsageError(fmt::format("no results file given ({})", kHistoryUsage));
  const std::string html = vm.count("html") ? vm["html"].as<std::string>() : "";
  const std::string baselinePath = vm.count("write-baseline") ? vm["write-baseline"].as<std::string>() : "";
  std::vector<SkippedFile> unlisted;
  const std::vector<std::string> paths = inputsOf(vm["file"].as<std::vector<std::string>>(), unlisted);
  if (!html.empty() && html == baselinePath) throw core::UsageError(fmt::format("--html and --write-baseline both name {}", html));
  std::vector<core::OutputLock> locks;
  const bool force = vm.count("force") > 0;
  for (const auto& [out, what] : {std::pair{html, "HTML page"}, std::pair{baselinePath, "baseline"}}) {
    if (out.empty()) continue;
    refuseResultsFile(out);
    locks.push_back(core::claimOutput(out, {.what = what, .replace = force, .inputs = paths}, "fabricmap history"));
  }
  Collected c = collect(paths, std::move(unlisted), !baselinePath.empty());
  if (c.runs.empty()) throw nothingRead(c.skipped);
  for (const SkippedFile& s : c.skipped) fmt::print(stderr, "fabricmap history: warning: skipped: {}\n", s.reason);
  std::vector<std::string> written;
  if (!baselinePath.empty()) written.push_back(writeBaseline(baselinePath, c.runs));
  const History h = buildHistory(std::move(c.runs), std::move(c.skipped));
  for (const std::string& w : h.warnings) fmt::print(stderr, "fabricmap history: warning: {}\n", w);
  if (!html.empty()) {
    core::writeReplacing(html, historyToHtml(h));
    written.push_back(fmt::format("{}: history of {} runs", html, h.runs.size()));
  }
  const bool json = vm.count("json") > 0;
  if (json) {
    std::cout << historyToJson(h).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  } else {
    std::cout << historyToText(h);
  }
  std::cout.flush();
  for (const std::string& line : written) fmt::print(json ? stderr : stdout, "{}\n", line);
  return 0;
}

}  // namespace fabricmap::orchestrator
