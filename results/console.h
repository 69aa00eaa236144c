// Console output in the layout nccl-tests users read every day: one block per scope and op, a
// row per size (and group) with out-of-place and in-place side by side, then a short summary.
#pragma once

#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/sink.h"
#include "results/h5_reader.h"

namespace fabricmap::results {

class ConsoleSink final : public core::RecordSink {
 public:
  explicit ConsoleSink(std::FILE* out) : out_(out) {}

  void begin(const core::Provenance& provenance, const core::Topology& topology,
             const std::vector<core::ScopeRecord>& scopes) override;
  // Each step kind its own table; a kind without one is counted and not shown.
  void step(const core::StepRecord& step, const core::StepRows& rows) override;
  void layout(const std::string& layout, const std::vector<core::LayoutPlace>& places) override;
  void analysis(const core::Matrices& matrices, const std::vector<core::Finding>& findings) override;
  // A finding made during the run: said as it is found (the first of each kind and subject only),
  // and summarised by culprit with the analysis's findings, or at finish() when no analysis runs.
  void finding(const core::Finding& finding) override;
  void inventoryEnd(const core::InventoryRows& end) override;
  // Said at finish(), after the steps' line.
  void costs(const core::RankZeroCosts& costs) override { costs_ = costs; }
  void finish(bool complete) override;
  // Findings a file recorded during its run (`show` of a file without matrices): summarised by
  // culprit at finish(), without the notices a live run prints as they are found.
  void recordedFindings(const std::vector<core::Finding>& findings);

 private:
  void printInventory(const core::Topology& topology);
  struct Pending {
    core::StepRecord step;
    std::vector<core::CollectiveRecord> rows;
  };
  struct Peak {
    double busbw = -1;
    std::uint64_t bytes = 0;
  };

  void collectiveStep(const core::StepRecord& step, const std::vector<core::CollectiveRecord>& rows);
  void copyStep(const core::StepRecord& step, std::span<const core::CopyRecord> copies);
  void pairStep(const core::StepRecord& step, std::span<const core::PairRecord> pairs);
  void scalingStep(const core::StepRecord& step, std::span<const core::ScalingRecord> rows);
  void trainingStep(const core::StepRecord& step, std::span<const core::TrainingRecord> rows);
  void storageStep(const core::StepRecord& step, std::span<const core::StorageRecord> rows);
  void printBlockHeader(const core::StepRecord& step, const std::vector<core::CollectiveRecord>& rows);
  void printRows(const std::vector<core::CollectiveRecord>* outOfPlace,
                 const std::vector<core::CollectiveRecord>* inPlace);
  void flushPending();

  void printCulprits(const std::vector<core::Finding>& findings, bool pairsJudged);
  void printMatrix(const char* title, const core::Matrix& m, const std::vector<std::string>& labels,
                   const char* format);

  std::FILE* out_;
  std::vector<std::string> nodeNames_;
  core::Topology topology_;                  // names the rank a corruption culprit is charged to
  std::vector<core::Finding> runFindings_;   // made during the run, not yet summarised
  std::set<std::pair<core::FindingKind, std::string>> noticed_;  // (kind, subject) said as found
  std::set<std::string> pairLevelsShown_;
  void printCopies(const core::Matrices& m);

  int copySteps_ = 0;
  int scalingSteps_ = 0;
  int trainingSteps_ = 0;
  int storageSteps_ = 0;
  int pairRounds_ = 0;
  int pairRetests_ = 0;
  std::string blockKey_;
  std::optional<Pending> pending_;
  std::set<std::string> waiversShown_;
  // (scope, op) -> per group peak busbw, in first-seen order
  std::vector<std::pair<std::string, std::map<int, Peak>>> peaks_;
  std::uint64_t wrong_ = 0;
  bool checked_ = false;
  std::vector<std::string> noisy_;  // steps whose iteration times varied too much
  int stepsRun_ = 0;
  int stepsWaived_ = 0;
  std::optional<core::RankZeroCosts> costs_;
};

// The text form of `fabricmap show`: the file's records replayed through a ConsoleSink.
void printResults(std::FILE* out, const ResultsFile& file);

}  // namespace fabricmap::results
