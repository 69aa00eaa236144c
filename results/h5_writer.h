// Writes a run's records to a schema-v1 HDF5 file as they arrive (rank 0 only).
#pragma once

#include <string>

#include "core/sink.h"
#include "results/h5.h"

namespace fabricmap::results {

class H5Sink final : public core::RecordSink {
 public:
  // Creates (truncates) `path` + kNewSuffix, renamed to `path` once begin() has written the
  // provenance and topology. Throws UsageError with the reason when it cannot be written.
  explicit H5Sink(const std::string& path);
  static constexpr const char* kNewSuffix = ".new";

  void begin(const core::Provenance& provenance, const core::Topology& topology,
             const std::vector<core::ScopeRecord>& scopes) override;
  // Appends the step and its rows, then flushes, so a run that dies keeps what it measured.
  void step(const core::StepRecord& step, const std::vector<core::CollectiveRecord>& rows) override;
  void copyStep(const core::StepRecord& step, const std::vector<core::CopyRecord>& copies) override;
  void pairStep(const core::StepRecord& step, const std::vector<core::PairRecord>& pairs) override;
  void planExtended(int plannedSteps) override;
  void analysis(const core::Matrices& matrices, const std::vector<core::Finding>& findings) override;
  void finding(const core::Finding& finding) override;
  void finish(bool complete) override;

 private:
  std::string path_;
  h5::Handle file_;
  std::vector<core::NodeRecord> nodes_;  // names for the per-node matrix groups
};

// Fails with a UsageError naming the reason (missing directory, permission) when `path` cannot be
// created; creates missing parent directories only when `createParents` is set.
void checkWritable(const std::string& path, bool createParents);

}  // namespace fabricmap::results
