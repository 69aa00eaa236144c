// Endpoints gathered (see endpoints.h). Each rank sends "peer<TAB>transports" lines.
#include "orchestrator/run/endpoints.h"

#include <algorithm>
#include <sstream>
#include <string>

#include "core/units.h"
#include "worker/comm.h"

namespace fabricmap::orchestrator {

std::vector<core::EndpointRecord> endpointRows(int rank, const std::vector<worker::EndpointPath>& paths) {
  std::vector<std::string> ways;
  std::vector<std::vector<int>> peers;
  for (const worker::EndpointPath& p : paths) {
    if (p.transports.empty()) continue;
    const auto found = std::find(ways.begin(), ways.end(), p.transports);
    if (found == ways.end()) {
      ways.push_back(p.transports);
      peers.push_back({p.peer});
    } else {
      peers[static_cast<std::size_t>(found - ways.begin())].push_back(p.peer);
    }
  }
  std::vector<core::EndpointRecord> rows;
  for (std::size_t i = 0; i < ways.size(); ++i) {
    std::sort(peers[i].begin(), peers[i].end());
    rows.push_back({rank, core::formatRanks(peers[i]), ways[i]});
  }
  return rows;
}

std::vector<core::EndpointRecord> gatherEndpoints(MPI_Comm world, const std::vector<worker::EndpointPath>& mine) {
  std::string lines;
  for (const worker::EndpointPath& p : mine) {
    std::string text = p.transports;
    std::replace(text.begin(), text.end(), '\n', ' ');
    lines += std::to_string(p.peer) + '\t' + text + '\n';
  }
  const std::vector<std::string> all = worker::gatherStrings(world, lines);
  std::vector<core::EndpointRecord> rows;
  for (std::size_t rank = 0; rank < all.size(); ++rank) {
    std::vector<worker::EndpointPath> paths;
    std::istringstream in(all[rank]);
    for (std::string line; std::getline(in, line);) {
      const std::size_t tab = line.find('\t');
      if (tab == std::string::npos) continue;
      paths.push_back({std::stoi(line.substr(0, tab)), line.substr(tab + 1)});
    }
    for (core::EndpointRecord& r : endpointRows(static_cast<int>(rank), paths)) rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace fabricmap::orchestrator
