// `fabricmap report FILE.h5 [-o report.html]`: the self-contained HTML report of a results file.
#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "core/files.h"
#include "orchestrator/commands.h"
#include "orchestrator/command_line.h"
#include "orchestrator/predict_options.h"
#include "orchestrator/run/fabric_input.h"
#include "orchestrator/verdicts/advise.h"
#include "results/h5_reader.h"
#include "results/report.h"

namespace fabricmap::orchestrator {
namespace {

constexpr const char* kUsageLine =
    "usage: fabricmap report FILE.h5 [-o report.html] [--force] [--fabric F] [--model M | --params N --layers L --hidden H [advise options]]";

namespace fs = std::filesystem;
namespace po = boost::program_options;

// With a model named, the advice of `fabricmap advise` on this file; a file that lacks what advise
// needs (no GPU memory known, no ranks) gets the reason in the section instead, the report itself
// being worth writing.
std::vector<results::ReportSection> adviceSection(const po::variables_map& vm, const results::ResultsFile& file) {
  if (!predictionRequested(vm)) return {};
  const AdviseConfig config = adviseConfigFrom(vm);
  results::ReportSection section{"advice", "Advice: " + config.base.model.name, ""};
  try {
    section.html = adviceToHtml(config, advise(config, file));
  } catch (const core::UsageError& e) {
    fmt::print(stderr, "fabricmap report: no advice: {}\n", e.what());
    section.html = "<p class=\"note\">No advice: " + results::htmlEscape(e.what()) + "</p>\n";
  }
  return {section};
}

}  // namespace

int reportCommand(const std::vector<std::string>& args) {
  po::options_description opts("fabricmap report options");
  opts.add_options()("help,h", "show this help")(
      "output,o", po::value<std::string>(), "HTML file to write (default: FILE.html beside FILE.h5)")("force", "replace the HTML file when it exists")(
      "fabric", po::value<std::string>(),
      "judge the file's node matrix again with this fabric topology (ibnetdiscover output or \"node -> leaf\" lines)");
  po::options_description advice("advice section (fabricmap advise's options; shown when a model is named)");
  addAdviseOptions(advice);
  opts.add(advice);
  opts.add_options()("file", po::value<std::string>(), "results file");
  po::positional_options_description positional;
  positional.add("file", 1);
  const po::variables_map vm = parseCommandLine(args, opts, positional, kUsageLine);
  if (vm.count("help")) {
    std::cout << kUsageLine << "\n\n" << opts;
    return 0;
  }
  if (!vm.count("file")) throw core::UsageError(fmt::format("no results file given ({})", kUsageLine));
  const std::string input = vm["file"].as<std::string>();
  const std::string output =
      vm.count("output") ? vm["output"].as<std::string>() : fs::path(input).replace_extension(".html").string();
  std::vector<std::string> inputs{input};
  if (vm.count("fabric")) inputs.push_back(vm["fabric"].as<std::string>());
  const core::OutputLock lock = core::claimOutput(
      output, {.what = "report", .replace = vm.count("force") > 0, .inputs = inputs}, "fabricmap report");
  results::ResultsFile file = results::readResults(input);
  if (vm.count("fabric")) judgeWithFabric(file, vm["fabric"].as<std::string>());
  const std::string html = results::renderReport(file, adviceSection(vm, file));
  core::writeReplacing(output, html);
  fmt::print("{}: {} report of {} ({} findings)\n", output,
             html.size() >= 1024 * 1024 ? fmt::format("{:.1f} MiB", static_cast<double>(html.size()) / (1024.0 * 1024.0))
                                        : fmt::format("{} KiB", (html.size() + 1023) / 1024),
             input, file.findings.size());
  return 0;
}

}  // namespace fabricmap::orchestrator
