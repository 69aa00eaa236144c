// Which rank lives on which node: the rank and node tables of a run, from every rank's probe.
#pragma once

#include <vector>

#include "core/records.h"

namespace fabricmap::topologies {

// Real nodes are the shared-memory domains MPI reports (probe.sharedLeader), numbered in order of
// their lowest rank; local ranks follow world-rank order. With ranksPerNode > 0, consecutive
// blocks of that many ranks are treated as nodes instead (the last block may be smaller) and the
// topology is marked emulated. Pure: same input, same topology, on every rank.
core::Topology buildTopology(const std::vector<core::HostProbe>& probes, int ranksPerNode);

}  // namespace fabricmap::topologies
