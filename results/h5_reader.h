// Reads a schema-v1 results file back into records.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/layout.h"
#include "core/records.h"
#include "results/verdict.h"

namespace fabricmap::results {

struct ResultsFile {
  std::string path;
  core::Provenance provenance;
  bool complete = false;
  core::Topology topology;
  std::vector<core::ScopeRecord> scopes;
  std::vector<core::StepRecord> steps;
  std::vector<core::CollectiveRecord> collectives;
  std::vector<core::CopyRecord> copies;
  std::vector<core::PairRecord> pairs;
  bool hasMatrices = false;  // the matrix phases (copies, pairwise) ran and wrote /matrix
  core::Matrices matrices;
  std::vector<core::Finding> findings;
  // Training pattern (/patterns/...): the layout it ran with ("" when none), each rank's place in
  // it, the per-traffic rows and the scaling sweep.
  std::string layout;
  std::vector<core::LayoutPlace> layoutPlaces;
  std::vector<core::TrainingRecord> training;
  std::vector<core::ScalingRecord> scaling;
  std::vector<core::StorageRecord> storage;  // /storage: the storage feed (run --storage)
  std::vector<core::ImportRecord> imported;  // /imported: the logs `fabricmap import` read
  std::string recoveredFrom;  // the journal the run was read from (its HDF5 file was not closed)
  std::optional<VerdictRecord> acceptance;  // /verdict: what `verify --record` wrote, if it did
};

// Where each step kind's rows are kept in a ResultsFile (one line per row type of core::StepRows).
template <class R>
std::vector<R>& rowsIn(ResultsFile& file);
template <>
inline std::vector<core::CollectiveRecord>& rowsIn(ResultsFile& file) { return file.collectives; }
template <>
inline std::vector<core::CopyRecord>& rowsIn(ResultsFile& file) { return file.copies; }
template <>
inline std::vector<core::PairRecord>& rowsIn(ResultsFile& file) { return file.pairs; }
template <>
inline std::vector<core::ScalingRecord>& rowsIn(ResultsFile& file) { return file.scaling; }
template <>
inline std::vector<core::TrainingRecord>& rowsIn(ResultsFile& file) { return file.training; }
template <>
inline std::vector<core::StorageRecord>& rowsIn(ResultsFile& file) { return file.storage; }

template <class R>
const std::vector<R>& rowsIn(const ResultsFile& file) {
  return rowsIn<R>(const_cast<ResultsFile&>(file));
}

// Throws UsageError when the file is missing, not HDF5, or not a fabricmap results file. While
// the file's journal exists (the run did not end cleanly) the run is read from the journal
// instead: every whole step, no matrices.
ResultsFile readResults(const std::string& path);

}  // namespace fabricmap::results
