// `fabricmap compare A.h5 B.h5 ... [--label L ...] [--tolerance T] [--model M --layout ...]
// [--price FILE=USD ... | --providers FILE] [--json]`: runs or providers side by side, figures
// beyond the tolerance from the first file marked, each priced at its own offer.
#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <cmath>
#include <iostream>

#include "core/error.h"
#include "orchestrator/commands.h"
#include "orchestrator/command_line.h"
#include "orchestrator/verdicts/compare.h"
#include "orchestrator/verdicts/providers.h"
#include "orchestrator/predict_options.h"
#include "results/h5_reader.h"

namespace fabricmap::orchestrator {

namespace {
constexpr const char* kCompareUsage =
    "usage: fabricmap compare A.h5 B.h5 ... [--label NAME ...] [--tolerance 0.1] [--json]\n"
    "       fabricmap compare A.h5 ... --baseline history.json: the files against a run history's baseline\n"
    "                         [--model M --layout tp=T,pp=P,dp=D ...: the predicted step of each file]\n"
    "                         [--price A.h5=2.5 ... | --providers providers.txt | --price-per-gpu-hour 2.5: cost]";

// Each file's price and GPU memory: --price FILE=USD, a --providers file, --price-per-gpu-hour.
std::vector<Offer> offersOf(const boost::program_options::variables_map& vm, const std::vector<std::string>& paths,
                            const std::vector<std::string>& labels) {
  std::vector<ComparedFile> files;
  for (std::size_t i = 0; i < paths.size(); ++i) files.push_back({paths[i], labels[i]});
  std::vector<PriceArgument> prices;
  if (vm.count("price")) {
    for (const std::string& p : vm["price"].as<std::vector<std::string>>()) prices.push_back(parsePriceArgument(p));
  }
  std::optional<Providers> providers;
  if (vm.count("providers")) providers = readProvidersFile(vm["providers"].as<std::string>());
  std::optional<double> everyFile;
  if (vm.count("price-per-gpu-hour")) {
    everyFile = vm["price-per-gpu-hour"].as<double>();
    if (!(std::isfinite(*everyFile) && *everyFile >= 0))
      throw core::UsageError(fmt::format("--price-per-gpu-hour must be 0 or more, got {}", *everyFile));
  }
  return offersFor(files, providers ? &*providers : nullptr, prices, everyFile);
}

}  // namespace

int compareCommand(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  po::options_description opts("fabricmap compare options");
  opts.add_options()("help,h", "show this help")("json", "print JSON (documented in README.md)")(
      "label", po::value<std::vector<std::string>>(), "a column's name, once per file in order (default: the file name)")(
      "tolerance", po::value<double>()->default_value(0.1),
      "relative difference from the first file beyond which a figure is marked (0.1 = 10%)")(
      "baseline", po::value<std::string>(),
      "a run history's baseline (fabricmap history --write-baseline) as the first column, the reference")(
      "price", po::value<std::vector<std::string>>(),
      "FILE=USD: the price of one GPU-hour of that file's offer (FILE: as given, its file name or its --label); "
      "repeat per file; over --providers and --price-per-gpu-hour")(
      "providers", po::value<std::string>(),
      "a providers file: one line per file or label, its USD per GPU-hour and optionally its GPU memory "
      "(40G = 40 GiB, as --gpu-memory; README.md)");
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

  const std::vector<Offer> offers = offersOf(vm, paths, labels);
  std::vector<FileSummary> summaries;
  if (vm.count("baseline")) summaries.push_back(summarizeBaseline(readBaseline(vm["baseline"].as<std::string>())));
  for (std::size_t i = 0; i < paths.size(); ++i) {
    summaries.push_back(
        summarize(results::readResults(paths[i]), labels[i], prediction ? &*prediction : nullptr, offers[i]));
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
