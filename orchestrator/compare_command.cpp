// `fabricmap compare A.h5 B.h5 ... [--label L ...] [--tolerance T] [--model M --layout ...] [--json]`:
// runs or providers side by side, figures beyond the tolerance from the first file marked.
#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <cmath>
#include <iostream>

#include "core/error.h"
#include "orchestrator/commands.h"
#include "orchestrator/command_line.h"
#include "orchestrator/verdicts/compare.h"
#include "orchestrator/predict_options.h"
#include "results/h5_reader.h"

namespace fabricmap::orchestrator {

namespace {
constexpr const char* kCompareUsage =
    "usage: fabricmap compare A.h5 B.h5 ... [--label NAME ...] [--tolerance 0.1] [--json]\n"
    "       fabricmap compare A.h5 ... --baseline history.json: the files against a run history's baseline\n"
    "                         [--model M --layout tp=T,pp=P,dp=D ...: the predicted step of each file]";
}  // namespace

int compareCommand(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  po::options_description opts("fabricmap compare options");
  opts.add_options()("help,h", "show this help")("json", "print JSON (documented in README.md)")(
      "label", po::value<std::vector<std::string>>(), "a column's name, once per file in order (default: the file name)")(
      "tolerance", po::value<double>()->default_value(0.1),
      "relative difference from the first file beyond which a figure is marked (0.1 = 10%)")(
      "baseline", po::value<std::string>(),
      "a run history's baseline (fabricmap history --write-baseline) as the first column, the reference");
  po::options_description model("prediction (optional; the options of fabricmap predict)");
  addPredictOptions(model);
  opts.add(model);
  opts.add_options()("file", po::value<std::vector<std::string>>(), "results files");
  po::positional_options_description positional;
  positional.add("file", -1);
  const po::variables_map vm = parseCommandLine(args, opts, positional, kCompareUsage);
  if (vm.count("help")) {
    std::cout << kCompareUsage << "\n\n" << opts;
    return 0;
  }
  if (!vm.count("file")) throw core::UsageError(fmt::format("no results file given ({})", kCompareUsage));
  const auto paths = vm["file"].as<std::vector<std::string>>();
  std::vector<std::string> labels = vm.count("label") ? vm["label"].as<std::vector<std::string>>() : paths;
  if (labels.size() != paths.size())
    throw core::UsageError(fmt::format("{} --label for {} files: give one per file or none", labels.size(), paths.size()));
  std::optional<PredictConfig> prediction;
  if (predictionRequested(vm)) prediction = predictConfigFrom(vm);
  const double tolerance = vm["tolerance"].as<double>();
  if (!(tolerance >= 0) || !std::isfinite(tolerance))
    throw core::UsageError(fmt::format("--tolerance must be 0 or more, got {}", tolerance));

  std::vector<FileSummary> summaries;
  if (vm.count("baseline")) summaries.push_back(summarizeBaseline(readBaseline(vm["baseline"].as<std::string>())));
  for (std::size_t i = 0; i < paths.size(); ++i) {
    summaries.push_back(summarize(results::readResults(paths[i]), labels[i], prediction ? &*prediction : nullptr));
  }
  const Comparison comparison = compare(std::move(summaries), tolerance);
  if (vm.count("json")) {
    std::cout << comparisonToJson(comparison).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  } else {
    std::cout << comparisonToText(comparison);
  }
  return 0;
}

}  // namespace fabricmap::orchestrator
