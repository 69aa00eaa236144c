// `run --fabric FILE`: the fabric's topology read on rank 0 and placed over the run's nodes.
#pragma once

#include <mpi.h>

#include "core/fabric.h"
#include "core/records.h"
#include "orchestrator/run/planner.h"
#include "orchestrator/run/run_config.h"
#include "results/h5_reader.h"

namespace fabricmap::orchestrator {

// The file read (topologies/fabric_file.h) and said on the console: what it holds, the run's nodes
// it lacks (their pairs are judged as without a fabric), its warnings. A file that places none of
// the run's nodes is refused: a wrong file blames nothing and would only look reassuring. Empty
// without --fabric. Throws core::UsageError.
core::FabricGraph fabricOf(const RunConfig& config, const core::Topology& topology);

// Rank 0's claims of `topology`'s fabric (its topology holds the fabric read), told to every rank.
// Collective over `world`.
FabricClaims agreedClaims(MPI_Comm world, const core::Topology& topology);

// `show FILE --fabric F`, `report FILE --fabric F`: a file's node matrix judged again with the
// fabric's topology (a run measured without one, or another file of the same cluster). The
// findings the analysis makes without the fabric are taken out and those it makes with it put in;
// what the run found as it measured (wrong data, hangs, the inventory's) stays. Judged with the
// thresholds the run recorded (its arguments), else the defaults. `file.topology.fabric` becomes
// the file's. Throws core::UsageError for a file without a node matrix or a fabric that places
// none of its nodes.
void judgeWithFabric(results::ResultsFile& file, const std::string& fabricFile);

}  // namespace fabricmap::orchestrator
