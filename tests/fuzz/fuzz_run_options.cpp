// Fuzz target: `fabricmap run` arguments (one per line of the input), as every rank parses them:
// sizes with suffixes, lists, fault specifications, the resume checks. Bad arguments must be a
// UsageError, never a crash.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "orchestrator/run/run_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace orch = fabricmap::orchestrator;
  std::vector<std::string> args(1);
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') {
      args.emplace_back();
    } else {
      args.back() += static_cast<char>(data[i]);
    }
  }
  try {
    const orch::ParsedRun parsed = orch::parseRunOptions(args);
    (void)orch::toJsonString(parsed.config);
    (void)orch::measurementDifferences(parsed.config, orch::parseRunOptions({}).config);
    orch::RunConfig nccl = parsed.config;
    orch::applyBackendDefaults(nccl, "nccl");
  } catch (const fabricmap::core::UsageError&) {
  }
  return 0;
}
