// One scope model for one node. A file measured on one node (a run on one server, or a provider's
// nccl-tests log of one server) has a `world` scope and no separate `intra` one (the run waives it:
// the same groups), yet what its world measured is exactly that node's inside: NVLink, NVSwitch or
// PCIe, no NIC. So every verdict (verify, predict, advise, compare) takes such a file's world rows
// as its intra rows too. A file of several nodes is left as it is: its world crosses the network
// (with NVLink inside each node) and is judged as that.
#pragma once

#include <string_view>
#include <vector>

#include "core/records.h"
#include "results/h5_reader.h"

namespace fabricmap::orchestrator {

// Every rank of the file ran on one node.
bool isOneNode(const core::Topology& topology);

// The scope whose rows answer a verdict's question about `scope`: `world` for `intra` on a
// one-node file without intra rows of its own, `scope` itself otherwise.
std::string_view answeringScope(const results::ResultsFile& file, std::string_view scope);

// The collective rows a verdict judges: the file's own and, on a one-node file that measured no
// `intra` rows itself, each `world` row once more with the scope `intra`.
std::vector<core::CollectiveRecord> judgedCollectives(const results::ResultsFile& file);

// How a verdict names where a one-node file's intra figure came from ("" for other files).
inline constexpr const char* kIntraFromWorld = "one node: its world scope is the node's inside";

}  // namespace fabricmap::orchestrator
