// What `fabricmap history` needs of a results file, and nothing more: a thousand files must read in
// seconds, so the tables history does not use (ranks, steps, pairs, copies, inventory, patterns)
// and the rank matrices stay on disk.
#pragma once

#include <string>
#include <vector>

#include "core/records.h"
#include "results/h5_reader.h"

namespace fabricmap::results {

struct RunDigest {
  std::string path;
  core::Provenance provenance;     // created_utc, hostnames, backend, schema_version only
  std::vector<std::string> nodes;  // node names by node index ("node<i>" where a file has none)
  // pairsMeasured, nodeBw, classExpected(From) and nodeExpected only: the rank matrices are not read
  core::Matrices matrices;
  std::vector<core::Finding> findings;
  std::vector<core::CollectiveRecord> collectives;  // only when asked for (readRunDigest)
};

// Throws UsageError as readResults does for a file that is missing, not a fabricmap results file,
// or damaged. A run that left a journal is read through readResults (its steps and findings, no
// matrices).
RunDigest readRunDigest(const std::string& path, bool withCollectives);

// The same digest of a file already read whole.
RunDigest digestOf(const ResultsFile& file);

}  // namespace fabricmap::results
