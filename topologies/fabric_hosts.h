// The run's nodes in a fabric file (core/fabric.h): which host adapter belongs to which node.
#pragma once

#include <string>
#include <vector>

#include "core/fabric.h"
#include "core/records.h"

namespace fabricmap::topologies {

// The run's node each fabric device is an adapter of (-1: a switch, or a host not in the run). A
// host matches a node by its host name or node name, case-insensitively, also as short names
// (before the first '.'), so "node01" matches "node01.cluster".
std::vector<int> nodesOfDevices(const core::FabricGraph& graph, const core::Topology& topology);

// The run's nodes no adapter of the fabric belongs to, by name.
std::vector<std::string> nodesNotInFabric(const core::FabricGraph& graph, const core::Topology& topology);

}  // namespace fabricmap::topologies
