// Parallel layouts of a training job (`--layout tp=T,pp=P,dp=D[,ep=E]`): which ranks form each
// tensor-, pipeline-, data- and expert-parallel group. Rank order as Megatron-LM: TP innermost
// (consecutive ranks, so a TP group stays inside a node when T divides the ranks per node), then
// PP, then DP outermost (spanning nodes):
//   rank = (dp_index * PP + pp_index) * TP + tp_index
// Expert-parallel groups split each DP group into consecutive blocks of E (E divides D).
// Plain data and pure functions; the same answer on every rank.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/records.h"

namespace fabricmap::core {

struct Layout {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int ep = 1;
  int worldSize() const { return tp * pp * dp; }
};

// "tp=2,pp=2,dp=2" (any order, keys tp pp dp ep, each a positive integer, a missing key 1).
// Throws UsageError naming the problem.
Layout parseLayout(std::string_view text);
std::string formatLayout(const Layout& layout);  // "tp=2,pp=2,dp=2,ep=1"

// Why `layout` cannot run on `worldSize` ranks (product differs, E does not divide D); empty if
// it can.
std::string layoutProblem(const Layout& layout, int worldSize);

// Each rank's place in the layout: its index and group id in every dimension.
struct LayoutPlace {
  int rank = 0;
  int tpIndex = 0, ppIndex = 0, dpIndex = 0, epIndex = 0;  // position inside its group
  int tpGroup = 0, ppGroup = 0, dpGroup = 0, epGroup = 0;  // which group of that kind
};
LayoutPlace placeOf(const Layout& layout, int rank);

// The groups of one kind, as world ranks in group order (group g at index g).
enum class Parallelism { kTensor, kPipeline, kData, kExpert };
std::string_view name(Parallelism p);  // "tp", "pp", "dp", "ep"
std::vector<std::vector<int>> groupsOf(const Layout& layout, Parallelism kind);

// The TP groups whose ranks sit on more than one node of `topology` (the classic mistake on
// bridged or PCIe servers: tensor-parallel traffic over the network), as group ids.
std::vector<int> tpGroupsCrossingNodes(const Layout& layout, const Topology& topology);

}  // namespace fabricmap::core
