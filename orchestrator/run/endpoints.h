// The endpoints every rank's backend opened during the run, gathered for /inventory/endpoints.
#pragma once

#include <mpi.h>

#include <vector>

#include "core/records.h"
#include "worker/backend.h"

namespace fabricmap::orchestrator {

// Collective over `world`: each rank's paths to rank 0, one row per rank and distinct way of
// reaching its peers (peers as ranges, in rank order). Rank 0 gets the rows, the others none;
// none at all when no rank's backend says.
std::vector<core::EndpointRecord> gatherEndpoints(MPI_Comm world, const std::vector<worker::EndpointPath>& mine);

// The rows of one rank: its paths grouped by what they say, in the order first met.
std::vector<core::EndpointRecord> endpointRows(int rank, const std::vector<worker::EndpointPath>& paths);

}  // namespace fabricmap::orchestrator
