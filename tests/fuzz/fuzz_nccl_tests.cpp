// Fuzz target: an nccl-tests log as `fabricmap import nccl-tests` reads it: parsed, turned into
// records and printed as `show` and `show --json` print the file it would write. Bad input must
// be a UsageError naming the file and line, never a crash or a hang.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/error.h"
#include "fuzz_input.h"
#include "results/console.h"
#include "results/json.h"
#include "results/nccl_tests_log.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace results = fabricmap::results;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    // the file name decides the op of logs that name none: give it one half the time
    const auto log = results::parseNcclTestsLog(text, size % 2 == 0 ? "fuzz-allreduce.log" : "fuzz.log");
    const results::NcclTestsImport imported = results::importNcclTests({log});
    results::ResultsFile file;
    file.path = "fuzz.h5";
    file.complete = true;
    file.provenance.backend = "nccl-tests (imported)";
    file.provenance.importedFrom = "[\"fuzz.log\"]";
    file.provenance.worldSize = static_cast<int>(imported.topology.ranks.size());
    file.provenance.nodeCount = static_cast<int>(imported.topology.nodes.size());
    file.provenance.plannedSteps = static_cast<int>(imported.steps.size());
    file.topology = imported.topology;
    file.scopes = {imported.scope};
    for (const auto& [step, rows] : imported.steps) {
      file.steps.push_back(step);
      file.collectives.insert(file.collectives.end(), rows.begin(), rows.end());
    }
    file.imported = imported.imported;
    results::printResults(fabricmap::fuzz::sink(), file);
    (void)results::toJson(file).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const fabricmap::core::UsageError&) {
    // the documented answer to bad input
  }
  return 0;
}
