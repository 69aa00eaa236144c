// Where records go. Sinks (HDF5 file, console table, JSON) only format what they are given;
// the run command feeds every sink the same records in the same order.
#pragma once

#include <string>
#include <vector>

#include "core/layout.h"
#include "core/records.h"

namespace fabricmap::core {

class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual void begin(const Provenance& provenance, const Topology& topology,
                     const std::vector<ScopeRecord>& scopes) = 0;
  // One finished step and the rows its groups measured (none when waived).
  virtual void step(const StepRecord& step, const std::vector<CollectiveRecord>& rows) = 0;
  // One finished GPU-pair copy step and its rows (a pair per node and method).
  virtual void copyStep(const StepRecord& step, const std::vector<CopyRecord>& copies) = 0;
  // One finished pairwise round and its pairs.
  virtual void pairStep(const StepRecord& step, const std::vector<PairRecord>& pairs) = 0;
  // The training pattern's layout ("tp=2,pp=1,dp=4,ep=1") and each rank's place in it, before
  // its first step.
  virtual void layout(const std::string& layout, const std::vector<LayoutPlace>& places) = 0;
  // One finished scaling point (one row) and one finished training-pattern measurement (a row
  // per traffic type).
  virtual void scalingStep(const StepRecord& step, const std::vector<ScalingRecord>& rows) = 0;
  virtual void trainingStep(const StepRecord& step, const std::vector<TrainingRecord>& rows) = 0;
  // The plan grew (retests of suspect pairs are planned after the first pass).
  virtual void planExtended(int plannedSteps) = 0;
  // The pairwise and copy matrices and the bottleneck findings, once all pairs are measured
  // (added to the findings recorded during the run).
  virtual void analysis(const Matrices& matrices, const std::vector<Finding>& findings) = 0;
  // A finding made during the run, recorded at once: data corruption, or a hang just before the
  // job ends (that one from the watchdog's thread, never at the same time as another call).
  virtual void finding(const Finding& finding) = 0;
  // The run ended; `complete` is true only when every planned step ran.
  virtual void finish(bool complete) = 0;
};

}  // namespace fabricmap::core
