// One scope model for one node (scope_model.h).
#include "orchestrator/verdicts/scope_model.h"

#include <algorithm>

namespace fabricmap::orchestrator {

bool isOneNode(const core::Topology& topology) {
  if (topology.nodes.size() == 1) return true;
  if (!topology.nodes.empty() || topology.ranks.empty()) return false;
  const int node = topology.ranks.front().node;
  return std::all_of(topology.ranks.begin(), topology.ranks.end(), [&](const core::RankRecord& r) { return r.node == node; });
}

namespace {

bool hasScope(const std::vector<core::CollectiveRecord>& rows, std::string_view scope) {
  return std::any_of(rows.begin(), rows.end(), [&](const core::CollectiveRecord& r) { return r.scope == scope; });
}

}  // namespace

std::string_view answeringScope(const results::ResultsFile& file, std::string_view scope) {
  if (scope == "intra" && isOneNode(file.topology) && !hasScope(file.collectives, "intra")) return "world";
  return scope;
}

std::vector<core::CollectiveRecord> judgedCollectives(const results::ResultsFile& file) {
  std::vector<core::CollectiveRecord> rows = file.collectives;
  if (!isOneNode(file.topology)) return rows;
  if (hasScope(rows, "intra")) return rows;
  const std::size_t measured = rows.size();
  for (std::size_t i = 0; i < measured; ++i) {
    if (rows[i].scope != "world") continue;
    core::CollectiveRecord intra = rows[i];
    intra.scope = "intra";
    rows.push_back(std::move(intra));
  }
  return rows;
}

}  // namespace fabricmap::orchestrator
