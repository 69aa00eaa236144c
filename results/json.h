// The JSON form of a results file (`fabricmap show --json`), documented in results/SCHEMA.md.
#pragma once

#include <nlohmann/json.hpp>

#include "results/h5_reader.h"

namespace fabricmap::results {

nlohmann::ordered_json toJson(const ResultsFile& file);

// Findings as `toJson` writes them (its "findings" array).
nlohmann::ordered_json findingsJson(const std::vector<core::Finding>& findings);
// GPUs as `toJson` writes /inventory/gpus (its "inventory"."gpus" array).
nlohmann::ordered_json gpuInventoryJson(const std::vector<core::GpuInventoryRecord>& gpus);

}  // namespace fabricmap::results
