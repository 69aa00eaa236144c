// Findings made while a run measures (see analysis.h): data corruption, the hang verdict.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/units.h"
#include "orchestrator/analysis/judging.h"

namespace fabricmap::orchestrator {

using core::Finding;
using internal::nodeName;

namespace {

// "0-3,5" -> {0, 1, 2, 3, 5} (core::formatRanks' form); what does not parse is left out.
std::vector<int> ranksIn(const std::string& text) {
  std::vector<int> out;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string part = text.substr(at, comma - at);
    at = comma + 1;
    const std::size_t dash = part.find('-');
    try {
      const int first = std::stoi(part.substr(0, dash));
      const int last = dash == std::string::npos ? first : std::stoi(part.substr(dash + 1));
      for (int r = first; r <= last && r - first < 1 << 20; ++r) out.push_back(r);
    } catch (const std::exception&) {
    }
  }
  return out;
}

// "host-a, host-b": the distinct hosts of `ranks` (nodes by name where emulated).
std::string hostsOf(const std::vector<int>& ranks, const core::Topology& topology) {
  std::vector<std::string> hosts;
  for (int r : ranks) {
    if (r < 0 || r >= static_cast<int>(topology.ranks.size())) continue;
    const auto& rec = topology.ranks[static_cast<std::size_t>(r)];
    const std::string& name = topology.nodes.at(static_cast<std::size_t>(rec.node)).name;
    if (std::find(hosts.begin(), hosts.end(), name) == hosts.end()) hosts.push_back(name);
  }
  return fmt::format("{}", fmt::join(hosts, ", "));
}

Finding corruption(double wrong) {
  Finding f;
  f.severity = core::Severity::kError;
  f.kind = core::FindingKind::kDataCorruption;
  f.measured = wrong;
  f.expected = 0;
  f.ratio = 0;
  f.unit = "elements";
  return f;
}

}  // namespace

core::Finding corruptionFinding(const core::CollectiveRecord& row, const core::Topology& topology) {
  Finding f = corruption(static_cast<double>(row.wrong));
  const std::vector<int> ranks = ranksIn(row.wrongRanks);
  if (!ranks.empty()) {
    f.rank = ranks.front();
    f.nodeA = topology.ranks.at(static_cast<std::size_t>(f.rank)).node;
  }
  f.subject = fmt::format("rank{} {} ({})", ranks.size() == 1 ? "" : "s", row.wrongRanks, hostsOf(ranks, topology));
  f.message = fmt::format(
      "{} {} {} B {} in scope {} group {} (ranks {}): {} wrong elements on {} - data corrupted in a transfer "
      "or on the device; check that rank's GPU (ECC), its links and NIC",
      row.op, row.dtype, row.bytes, row.inPlace ? "in-place" : "out-of-place", row.scope, row.group, row.ranks,
      row.wrong, f.subject);
  return f;
}

core::Finding corruptionFinding(const core::PairRecord& pair, const core::Topology& topology) {
  Finding f = corruption(static_cast<double>(pair.wrong));
  if (pair.level == "node") {
    f.nodeA = pair.a;
    f.nodeB = pair.b;
    f.subject = fmt::format("{} <-> {}", nodeName(topology, pair.a), nodeName(topology, pair.b));
  } else {
    f.rank = pair.a;
    f.nodeA = topology.ranks.at(static_cast<std::size_t>(pair.a)).node;
    f.nodeB = topology.ranks.at(static_cast<std::size_t>(pair.b)).node;
    f.subject = fmt::format("rank {} <-> rank {} ({})", pair.a, pair.b, hostsOf({pair.a, pair.b}, topology));
  }
  f.message = fmt::format("{}: {} wrong elements in checked transfers (step {}) - data corrupted on this link; "
                          "check its NICs, cables and switch ports",
                          f.subject, pair.wrong, pair.step);
  return f;
}

core::Finding corruptionFinding(const core::CopyRecord& copy, const core::Topology& topology) {
  Finding f = corruption(static_cast<double>(copy.wrong));
  f.rank = copy.rankA;
  f.nodeA = copy.node;
  const std::string node = nodeName(topology, copy.node);
  f.subject = copy.gpuA >= 0 && copy.gpuB >= 0 ? fmt::format("{} GPU{}-GPU{}", node, copy.gpuA, copy.gpuB)
                                               : fmt::format("{} ranks {}-{}", node, copy.rankA, copy.rankB);
  f.message = fmt::format("{}: {} wrong elements in checked {} copies (step {}) - data corrupted between these "
                          "GPUs; check their NVLink/PCIe path and memory (ECC)",
                          f.subject, copy.wrong, copy.method, copy.step);
  return f;
}

core::Finding hangFinding(int step, const std::string& what, double waitedSeconds, double deadlineSeconds,
                          const core::HangVerdict& verdict, const core::Topology& topology) {
  std::vector<std::string> hosts;
  for (int r : verdict.culprits) {
    const std::string& host = topology.ranks.at(static_cast<std::size_t>(r)).hostname;
    const std::string& node = topology.nodes.at(static_cast<std::size_t>(topology.ranks[static_cast<std::size_t>(r)].node)).name;
    const std::string where = node == host ? host : fmt::format("{} on {}", node, host);
    if (std::find(hosts.begin(), hosts.end(), where) == hosts.end()) hosts.push_back(where);
  }
  Finding f;
  f.severity = core::Severity::kError;
  f.kind = core::FindingKind::kHang;
  const std::string ranks = core::formatRanks(verdict.culprits);
  f.subject = fmt::format("rank{} {} ({})", verdict.culprits.size() == 1 ? "" : "s", ranks, fmt::join(hosts, ", "));
  if (verdict.culprits.empty()) f.subject = "all ranks";
  f.measured = waitedSeconds;
  f.expected = deadlineSeconds;
  f.ratio = deadlineSeconds > 0 ? waitedSeconds / deadlineSeconds : 0.0;
  f.unit = std::string("s");  // moved, not assigned from "s": GCC 12 warns wrongly there (-Wrestrict)
  if (!verdict.culprits.empty()) {
    f.rank = verdict.culprits.front();
    f.nodeA = topology.ranks.at(static_cast<std::size_t>(f.rank)).node;
  }
  f.message = fmt::format("step {}{} hung: {} {}{}; ended after {:.0f} s (deadline {:.0f} s)", step,
                          what.empty() ? "" : " (" + what + ")", f.subject, verdict.why,
                          verdict.waiting.empty() ? ""
                                                  : fmt::format("; rank{} {} waited for {}",
                                                                verdict.waiting.size() == 1 ? "" : "s",
                                                                core::formatRanks(verdict.waiting),
                                                                verdict.culprits.size() == 1 ? "it" : "them"),
                          waitedSeconds, deadlineSeconds);
  return f;
}

}  // namespace fabricmap::orchestrator
