// Option parsing shared by the file subcommands (show's successors: predict, report, compare,
// verify, import): placeholders refused, Boost errors as one UsageError that ends with the usage.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include "core/error.h"
#include "orchestrator/commands.h"

namespace fabricmap::orchestrator {

inline boost::program_options::variables_map parseCommandLine(
    const std::vector<std::string>& args, const boost::program_options::options_description& options,
    const boost::program_options::positional_options_description& positional, std::string_view usage) {
  namespace po = boost::program_options;
  po::variables_map vm;
  try {
    refusePlaceholders(args);
    po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw core::UsageError(fmt::format("{} ({})", e.what(), usage));
  }
  return vm;
}

}  // namespace fabricmap::orchestrator
