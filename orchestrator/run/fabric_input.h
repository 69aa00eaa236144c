// `run --fabric FILE`: the fabric's topology read on rank 0 and placed over the run's nodes.
#pragma once

#include "core/fabric.h"
#include "core/records.h"
#include "orchestrator/run/run_config.h"

namespace fabricmap::orchestrator {

// The file read (topologies/fabric_file.h) and said on the console: what it holds, the run's nodes
// it lacks (their pairs are judged as without a fabric), its warnings. A file that places none of
// the run's nodes is refused: a wrong file blames nothing and would only look reassuring. Empty
// without --fabric. Throws core::UsageError.
core::FabricGraph fabricOf(const RunConfig& config, const core::Topology& topology);

}  // namespace fabricmap::orchestrator
