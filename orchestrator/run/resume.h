// `fabricmap run --resume FILE.h5`: finishing a run that stopped. The resumed run parses the
// recorded arguments again, checks that it measures the same steps on the same ranks, takes every
// step the file holds whole from the file (rank 0 feeds those records to the new sinks as if just
// measured, so the matrices and findings are built from the same data) and runs the rest.
// Everything here but readResumable() is plain logic over records.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "core/plan.h"
#include "core/records.h"
#include "orchestrator/run/run_config.h"
#include "results/h5_reader.h"
#include "worker/executor.h"

namespace fabricmap::orchestrator {

// What every rank needs to know of the recorded run: its arguments and the backend it ran on.
struct RecordedRun {
  std::vector<std::string> args;
  std::string backend;
};
std::string encode(const RecordedRun& run);
RecordedRun decodeRecordedRun(const std::string& wire);

// The run recorded in `path` (its journal when there is one), with the reason as a UsageError
// when it cannot be resumed: missing or not a results file, already complete, written by another
// fabricmap build, or by one that did not record its arguments.
results::ResultsFile readResumable(const std::string& path);
RecordedRun recordedRunOf(const results::ResultsFile& file);

// The resumed run's configuration: the recorded one, with the resume command's run-time settings
// (injected faults, progress, a step timeout when given) and writing to the resumed file.
// Throws UsageError listing the differences when the command also gives measurement options and
// they differ from the recorded ones.
RunConfig resumedConfig(const ParsedRun& given, const RecordedRun& recorded);

// Why ranks laid out as `now` cannot finish a run measured as `recorded` (rank count, nodes, which
// host and local rank each rank is, its GPU); empty when they can.
std::string layoutDifference(const core::Topology& recorded, const core::Topology& now);

// The provenance of the resumed file: the recorded run's, its plan size now, and one more line
// in `resumed` saying when, how many steps were kept and the command that resumed it.
core::Provenance resumedProvenance(core::Provenance recorded, int plannedSteps, int kept,
                                   const std::string& utc, const std::string& commandLine);

// The recorded steps of a run (rank 0), served as the results a run of them would return.
class Replay {
 public:
  Replay() = default;
  explicit Replay(const results::ResultsFile& file);

  // One flag per step of `plan` from index `from` on: the file holds that step whole and it is
  // the plan's step (same kind, scope, op, type, size, placement; a pairwise round's pairs among
  // the planned ones). A recorded step that is not the plan's: UsageError when `strict` (the first
  // pass, which must be the same plan), otherwise the step runs again (a retest of other pairs).
  std::vector<char> match(const core::Plan& plan, int from, bool strict) const;

  // The recorded step `step` (which match() flagged), as its run would have returned it.
  template <class S>
  worker::Result<worker::RecordOf<S>> result(const S& step) const {
    using R = worker::RecordOf<S>;
    const auto& rows = std::get<std::map<int, std::vector<R>>>(rows_);
    const auto it = rows.find(step.index);
    return {steps_.at(step.index), it == rows.end() ? std::vector<R>{} : it->second};
  }

  // Findings of the stopped run that no step record reproduces: hangs (data corruption comes
  // back with the replayed rows; the analysis runs again at the end).
  std::vector<core::Finding> carriedFindings() const { return carried_; }
  int recordedSteps() const { return static_cast<int>(steps_.size()); }

 private:
  // Why the recorded step `index` is not `planned`; empty when it is.
  std::string mismatch(const core::StepRecord& planned, const std::vector<std::pair<int, int>>& pairs) const;

  std::map<int, core::StepRecord> steps_;
  // per step kind's row type (core::StepRows): the rows of each step
  template <class V>
  struct ByStep;
  template <class... R>
  struct ByStep<std::variant<std::span<const R>...>> {
    using type = std::tuple<std::map<int, std::vector<R>>...>;
  };
  ByStep<core::StepRows>::type rows_;
  std::vector<core::Finding> carried_;
};

}  // namespace fabricmap::orchestrator
