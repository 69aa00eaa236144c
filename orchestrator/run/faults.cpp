// --inject-fault: parsing a fault and naming its kind (see run_config.h).
#include <charconv>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "orchestrator/run/run_config.h"

namespace fabricmap::orchestrator {

std::string faultKindName(core::Fault::Kind kind) {
  switch (kind) {
    case core::Fault::Kind::kCorrupt: return "corrupt";
    case core::Fault::Kind::kError: return "error";
    case core::Fault::Kind::kStall: return "stall";
    case core::Fault::Kind::kCrash: return "crash";
  }
  return "?";
}

core::Fault parseFault(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return core::UsageError(fmt::format("invalid --inject-fault '{}': {}", text, why));
  };
  std::vector<std::string> parts;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, ':');) parts.push_back(part);
  core::Fault fault;
  const std::string kind = parts.empty() ? "" : parts[0];
  if (kind == "corrupt") {
    fault.kind = core::Fault::Kind::kCorrupt;
  } else if (kind == "error") {
    fault.kind = core::Fault::Kind::kError;
  } else if (kind == "stall") {
    fault.kind = core::Fault::Kind::kStall;
  } else if (kind == "crash") {
    fault.kind = core::Fault::Kind::kCrash;
  } else {
    throw bad("the kind must be 'corrupt', 'error', 'stall' or 'crash'");
  }
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const auto eq = parts[i].find('=');
    if (eq == std::string::npos) throw bad("expected key=value, got '" + parts[i] + "'");
    const std::string key = parts[i].substr(0, eq);
    const std::string value = parts[i].substr(eq + 1);
    if (key == "op") {
      fault.op = core::parseOp(value);
      if (!fault.op) throw bad("unknown op '" + value + "'");
      continue;
    }
    int number = 0;
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (ec != std::errc() || ptr != value.data() + value.size() || number < 0) {
      throw bad("'" + key + "' needs a non-negative integer");
    }
    if (key == "rank") {
      fault.rank = number;
    } else if (key == "step") {
      fault.step = number;
    } else {
      throw bad("unknown key '" + key + "' (rank, op, step)");
    }
  }
  return fault;
}

}  // namespace fabricmap::orchestrator
