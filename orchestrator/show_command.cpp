// `fabricmap show FILE.h5 [--json]`: what a results file holds, as text or as JSON.
// `fabricmap show --rules`: the analysis's rules, in the order they run.
#include <boost/program_options.hpp>
#include <iostream>

#include <fmt/format.h>

#include "core/error.h"
#include "orchestrator/analysis/analysis.h"
#include "orchestrator/commands.h"
#include "orchestrator/run/fabric_input.h"
#include "results/console.h"
#include "results/h5_reader.h"
#include "results/json.h"

namespace fabricmap::orchestrator {

int showCommand(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  po::options_description opts("fabricmap show options");
  opts.add_options()("help,h", "show this help")("json", "print JSON (documented in results/SCHEMA.md)")(
      "rules", "list the analysis's rules, in the order they run, and what each names")(
      "fabric", po::value<std::string>(),
      "judge the file's node matrix again with this fabric topology (ibnetdiscover output or \"node -> leaf\" lines)")(
      "file", po::value<std::string>(), "results file");
  po::positional_options_description positional;
  positional.add("file", 1);
  po::variables_map vm;
  try {
    refusePlaceholders(args);
    po::store(po::command_line_parser(args).options(opts).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw core::UsageError(std::string(e.what()) + " (usage: fabricmap show FILE.h5 [--json] [--fabric F] | --rules)");
  }
  if (vm.count("help")) {
    std::cout << "usage: fabricmap show FILE.h5 [--json] [--fabric F] | --rules\n\n" << opts;
    return 0;
  }
  if (vm.count("rules")) {
    for (const AnalysisRule& rule : analysisRules()) fmt::print("{:<20} {}\n", rule.name, rule.description);
    return 0;
  }
  if (!vm.count("file")) throw core::UsageError("no results file given (usage: fabricmap show FILE.h5 [--json] [--fabric F] | --rules)");
  results::ResultsFile file = results::readResults(vm["file"].as<std::string>());
  if (vm.count("fabric")) judgeWithFabric(file, vm["fabric"].as<std::string>());
  if (vm.count("json")) {
    // invalid UTF-8 (a path or command line in another encoding) is replaced, not fatal
    std::cout << results::toJson(file).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << '\n';
  } else {
    results::printResults(stdout, file);
  }
  return 0;
}

}  // namespace fabricmap::orchestrator
