// Where records go. Sinks (HDF5 file, console table, JSON) only format what they are given;
// the run command feeds every sink the same records in the same order. Every call has a no-op
// default: a sink overrides what it stores or shows, and never names what it does not.
#pragma once

#include <string>
#include <vector>

#include "core/layout.h"
#include "core/records.h"

namespace fabricmap::core {

class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual void begin(const Provenance& /*provenance*/, const Topology& /*topology*/,
                     const std::vector<ScopeRecord>& /*scopes*/) {}
  // One finished step of any kind and the rows it measured (none when waived): collectives,
  // GPU-pair copies, a pairwise round, a scaling point, a training-pattern measurement.
  virtual void step(const StepRecord& /*step*/, const StepRows& /*rows*/) {}
  // The training pattern's layout ("tp=2,pp=1,dp=4,ep=1") and each rank's place in it, before
  // its first step.
  virtual void layout(const std::string& /*layout*/, const std::vector<LayoutPlace>& /*places*/) {}
  // The plan grew (retests of suspect pairs are planned after the first pass).
  virtual void planExtended(int /*plannedSteps*/) {}
  // The pairwise and copy matrices and the bottleneck findings, once all pairs are measured
  // (added to the findings recorded during the run).
  virtual void analysis(const Matrices& /*matrices*/, const std::vector<Finding>& /*findings*/) {}
  // A finding made during the run, recorded at once: data corruption, or a hang just before the
  // job ends (that one from the watchdog's thread, never at the same time as another call).
  virtual void finding(const Finding& /*finding*/) {}
  // What the run's end adds to the inventory, before finish(): the RDMA ports' error counters read
  // at the start and at the end, the endpoints the backend's library built (the other tables empty).
  virtual void inventoryEnd(const InventoryRows& /*end*/) {}
  // What rank 0's own work cost, before finish(): planning, analysis, feeding the sinks.
  virtual void costs(const RankZeroCosts& /*costs*/) {}
  // The run ended; `complete` is true only when every planned step ran.
  virtual void finish(bool /*complete*/) {}
};

// Overloads for std::visit: Overloaded{[](const A&) {...}, [](const auto&) {...}}.
template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;  // clang 14 does not deduce aggregates' template arguments

}  // namespace fabricmap::core
