// The results journal: what makes a results file crash-safe. Beside FILE.h5, rank 0 appends every
// record to FILE.h5.journal as JSON lines, one write() per step (a process killed at any instant
// loses no completed write; the kernel keeps it), each step's rows before its step line. The
// HDF5 file is written as before, but HDF5 has no journal of its own: a writer killed in the
// middle of an append can leave it unreadable. The journal is removed once the file is complete
// and closed; while it exists, readers take the run from it (readResults does), keeping exactly
// the steps whose step line is whole.
#pragma once

#include <optional>
#include <string>

#include "core/sink.h"
#include "results/h5_reader.h"
#include "results/h5_writer.h"

namespace fabricmap::results {

// FILE.h5 -> FILE.h5.journal
std::string journalPath(const std::string& resultsPath);

class JournalSink final : public core::RecordSink {
 public:
  // The journal of `resultsPath`, created (truncated) by begin(); feed it after the HDF5 sink.
  // Published later, it is written beside as unpublishedPath(journal) until publish().
  explicit JournalSink(const std::string& resultsPath, Publish when = Publish::kAtBegin);
  JournalSink(const JournalSink&) = delete;
  JournalSink& operator=(const JournalSink&) = delete;
  ~JournalSink() override;

  void begin(const core::Provenance& provenance, const core::Topology& topology,
             const std::vector<core::ScopeRecord>& scopes) override;
  void step(const core::StepRecord& step, const core::StepRows& rows) override;
  void layout(const std::string& layout, const std::vector<core::LayoutPlace>& places) override;
  void planExtended(int plannedSteps) override;
  void finding(const core::Finding& finding) override;
  void inventoryEnd(const core::InventoryRows& end) override;
  // The matrices are not journaled (a run that dies before its end has none); the findings are.
  void analysis(const core::Matrices& matrices, const std::vector<core::Finding>& findings) override;
  // Complete: the HDF5 file (finished before this sink) holds everything; the journal goes.
  void finish(bool complete) override;
  // Syncs the journal and renames it to its path: from now on it is the run readers see.
  void publish();

 private:
  void append(const std::string& lines);

  std::string path_;
  Publish when_;
  bool published_ = false;
  int fd_ = -1;
};

// The run recorded in a journal (no matrices); nullopt when `journal` does not exist or was cut
// off before its first record. Lines after the last whole step line are ignored. Throws
// UsageError when it is not a fabricmap journal.
std::optional<ResultsFile> readJournal(const std::string& journal, const std::string& resultsPath);

}  // namespace fabricmap::results
