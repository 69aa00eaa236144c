// Where records go. Sinks (HDF5 file, console table, JSON) only format what they are given;
// the run command feeds every sink the same records in the same order.
#pragma once

#include <vector>

#include "core/records.h"

namespace fabricmap::core {

class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual void begin(const Provenance& provenance, const Topology& topology,
                     const std::vector<ScopeRecord>& scopes) = 0;
  // One finished step and the rows its groups measured (none when waived).
  virtual void step(const StepRecord& step, const std::vector<CollectiveRecord>& rows) = 0;
  // The run ended; `complete` is true only when every planned step ran.
  virtual void finish(bool complete) = 0;
};

}  // namespace fabricmap::core
