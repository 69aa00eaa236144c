// The run's nodes in the fabric above them (core/fabric.h, `--fabric FILE`): where each node hangs
// and which switches and switch uplinks a node pair's traffic certainly crosses. The switch rule
// (switch_rules.cpp) weighs these as suspects against the node pairs' verdicts. Internal to
// orchestrator/analysis/.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/fabric.h"
#include "core/records.h"

namespace fabricmap::orchestrator::internal {

// What a set of slow node pairs may be blamed on: a whole switch, or the cables above a switch (its
// uplinks), over the pairs whose traffic certainly crosses them. A pair crosses a switch certainly
// when one end can only reach the level it is on through it: a host on one leaf crosses that leaf,
// and the spine where two leaves meet when they share only that one. Where several spines join two
// leaves, which one a pair crosses is the subnet manager's routing, not known here: such a pair
// crosses no spine with certainty, and its leaves' uplinks only as a group.
struct FabricSuspect {
  enum class Kind { kSwitch, kUplinks };
  Kind kind = Kind::kSwitch;
  int device = -1;              // the switch (its uplinks: the cables to the level above it)
  std::vector<int> uplinks;     // kUplinks: the indices of those cables in FabricGraph::links
  std::vector<int> nodesBelow;  // the run's nodes under it
};

struct FabricPaths {
  int nodes = 0;                        // the run's nodes
  std::vector<int> placed;              // run nodes found in the fabric, ascending
  std::vector<FabricSuspect> suspects;  // every switch above a placed node, and its uplinks where it has any
  // The suspects the directed pair (x, y) certainly crosses (indices into `suspects`); empty when
  // an end is not placed or the two ends share no switch.
  std::vector<int> crossed(int x, int y) const;

  // per run node and level: the switches above it (level 1 at index 0), device indices, sorted
  std::vector<std::vector<std::vector<int>>> above;
  std::vector<int> switchSuspect;  // per device: its kSwitch suspect, -1 for none
  std::vector<int> uplinkSuspect;  // per device: its kUplinks suspect, -1 for none
};

FabricPaths fabricPaths(const core::FabricGraph& graph, const core::Topology& topology);

// How a finding names a suspect, with the GUID where the source gave one: a switch "leaf1
// (0x...)"; its uplinks "leaf1 port 33 -> spine0 port 1, port 34 -> spine1 port 1" (one cable: a
// switch_port finding's subject).
std::string suspectName(const core::FabricGraph& graph, const FabricSuspect& suspect);

}  // namespace fabricmap::orchestrator::internal
