// Reads a schema-v1 results file back into records.
#pragma once

#include <string>
#include <vector>

#include "core/records.h"

namespace fabricmap::results {

struct ResultsFile {
  std::string path;
  core::Provenance provenance;
  bool complete = false;
  core::Topology topology;
  std::vector<core::ScopeRecord> scopes;
  std::vector<core::StepRecord> steps;
  std::vector<core::CollectiveRecord> collectives;
};

// Throws UsageError when the file is missing, not HDF5, or not a fabricmap results file.
ResultsFile readResults(const std::string& path);

}  // namespace fabricmap::results
