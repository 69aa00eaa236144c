// Writes a run's records to a schema-v1 HDF5 file as they arrive (rank 0 only).
#pragma once

#include <string>

#include "core/sink.h"
#include "results/h5.h"

namespace fabricmap::results {

// When a file sink's output takes its final name: once begin() has written the provenance and
// topology (a new run), or when publish() is called (a resumed run, once the recorded steps are
// in again: until then the file being finished stays as it was).
enum class Publish { kAtBegin, kWhenAsked };

// FILE -> FILE.new: where a file sink writes until it is published.
std::string unpublishedPath(const std::string& path);

class H5Sink final : public core::RecordSink {
 public:
  // Creates (truncates) unpublishedPath(path), renamed to `path` when published. Throws
  // UsageError with the reason when it cannot be written.
  explicit H5Sink(const std::string& path, Publish when = Publish::kAtBegin);
  // Renames the file to its path (it keeps being written through the open handle).
  void publish();

  void begin(const core::Provenance& provenance, const core::Topology& topology,
             const std::vector<core::ScopeRecord>& scopes) override;
  // Appends the step and its rows, then flushes, so a run that dies keeps what it measured.
  void step(const core::StepRecord& step, const core::StepRows& rows) override;
  void layout(const std::string& layout, const std::vector<core::LayoutPlace>& places) override;
  void planExtended(int plannedSteps) override;
  void analysis(const core::Matrices& matrices, const std::vector<core::Finding>& findings) override;
  void finding(const core::Finding& finding) override;
  void inventoryEnd(const core::InventoryRows& end) override;
  void costs(const core::RankZeroCosts& costs) override;
  void finish(bool complete) override;
  // `fabricmap import`: the logs' tables (/imported), before finish(). Not a RecordSink call: a
  // run never has any.
  void imported(const std::vector<core::ImportRecord>& records);

 private:
  std::string path_;
  Publish when_;
  bool published_ = false;
  h5::Handle file_;
  std::vector<core::NodeRecord> nodes_;  // names for the per-node matrix groups
};

}  // namespace fabricmap::results
