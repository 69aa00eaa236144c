// Run history: per node and node pair across runs, and the baseline over the runs (history.h).
#include "orchestrator/verdicts/history.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>
#include <utility>

#include "core/stats.h"

namespace fabricmap::orchestrator {
namespace {

using NodePair = std::pair<int, int>;

bool blames(const core::Finding& f) {
  return f.severity == core::Severity::kError || f.severity == core::Severity::kWarning;
}

bool nodeIn(const std::vector<std::string>& nodes, int i) { return i >= 0 && i < static_cast<int>(nodes.size()); }

// The nodes a run blames, by index.
std::set<int> blamedNodes(const results::RunDigest& run) {
  std::set<int> out;
  for (const core::Finding& f : run.findings) {
    if (!blames(f)) continue;
    for (int n : {f.nodeA, f.nodeB}) {
      if (nodeIn(run.nodes, n)) out.insert(n);
    }
  }
  return out;
}

// The node pairs a run blames (a finding naming two nodes), by index, lower first.
std::set<NodePair> blamedPairs(const results::RunDigest& run) {
  std::set<NodePair> out;
  for (const core::Finding& f : run.findings) {
    if (blames(f) && f.nodeA != f.nodeB && nodeIn(run.nodes, f.nodeA) && nodeIn(run.nodes, f.nodeB)) {
      out.emplace(std::min(f.nodeA, f.nodeB), std::max(f.nodeA, f.nodeB));
    }
  }
  return out;
}

std::pair<std::string, std::string> pairNames(const results::RunDigest& run, NodePair p) {
  const std::string& x = run.nodes[static_cast<std::size_t>(p.first)];
  const std::string& y = run.nodes[static_cast<std::size_t>(p.second)];
  return x < y ? std::pair(x, y) : std::pair(y, x);
}

bool isFlapping(const std::vector<SubjectRun>& runs) {
  const auto first = std::find_if(runs.begin(), runs.end(), [](const SubjectRun& r) { return r.blamed; });
  return first != runs.end() && std::any_of(first, runs.end(), [](const SubjectRun& r) { return !r.blamed; });
}

SubjectStatus statusOf(const SubjectHistory& s) {
  if (s.blamed == 0) return SubjectStatus::kClean;
  if (s.blamed == static_cast<int>(s.runs.size())) return SubjectStatus::kBlamed;
  return isFlapping(s.runs) ? SubjectStatus::kFlapping : SubjectStatus::kNewlyBlamed;
}

std::optional<double> trendOf(const std::vector<double>& bw) {
  if (bw.size() < 2) return std::nullopt;
  const double before = core::median(std::vector<double>(bw.begin(), bw.end() - 1));
  if (!(before > 0)) return std::nullopt;
  return bw.back() / before;
}

void finish(SubjectHistory& s, const std::vector<HistoryRunInfo>& runs) {
  for (const SubjectRun& r : s.runs) {
    s.measured += std::isfinite(r.bandwidth) ? 1 : 0;
    s.blamed += r.blamed ? 1 : 0;
  }
  s.firstSeen = runs[static_cast<std::size_t>(s.runs.front().run)].createdUtc;
  s.lastSeen = runs[static_cast<std::size_t>(s.runs.back().run)].createdUtc;
  s.trend = trendOf(s.bandwidths());
  s.status = statusOf(s);
}

// A run's set of hosts: its `hostnames` attribute (the real hosts, also of emulated nodes), else
// its node names (a file without the attribute).
std::vector<std::string> hostsOf(const results::RunDigest& run) {
  std::set<std::string> hosts;
  std::string_view list = run.provenance.hostnames;
  while (!list.empty()) {
    const std::size_t comma = std::min(list.find(','), list.size());
    std::string_view host = list.substr(0, comma);
    while (!host.empty() && host.front() == ' ') host.remove_prefix(1);
    while (!host.empty() && host.back() == ' ') host.remove_suffix(1);
    if (!host.empty()) hosts.emplace(host);
    list.remove_prefix(std::min(comma + 1, list.size()));
  }
  if (hosts.empty()) hosts.insert(run.nodes.begin(), run.nodes.end());
  // "localhost" (an nccl-tests log run on one machine prints it) names no machine: such a run is a
  // cluster of its own rather than joined to every other localhost run
  if (std::any_of(hosts.begin(), hosts.end(), [](const std::string& h) { return h.rfind("localhost", 0) == 0; }))
    return {"localhost (" + run.path + ")"};
  return {hosts.begin(), hosts.end()};
}

HistoryRunInfo infoOf(const results::RunDigest& run) {
  int blamed = 0;
  for (const core::Finding& f : run.findings) blamed += blames(f) && (f.nodeA >= 0 || f.nodeB >= 0) ? 1 : 0;
  return {run.path,          run.provenance.createdUtc,          run.provenance.hostnames,
          run.provenance.backend, static_cast<int>(run.nodes.size()), blamed,
          hostsOf(run),           0};
}

// The root of `i` in a union-find forest, halving the path as it goes.
std::size_t rootOf(std::vector<std::size_t>& parent, std::size_t i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

// "h0, h1, h2 and 5 more": a cluster's hosts in a line.
std::string hostsText(const std::vector<std::string>& hosts) {
  constexpr std::size_t kShown = 3;
  const auto end = hosts.begin() + static_cast<std::ptrdiff_t>(std::min(hosts.size(), kShown));
  const std::vector<std::string> shown(hosts.begin(), end);
  return fmt::format("{}{}", fmt::join(shown, ", "),
                     hosts.size() > kShown ? fmt::format(" and {} more", hosts.size() - kShown) : "");
}

// Every node of a run that measured or blamed it, into `nodes` by name.
void addNodes(const results::RunDigest& run, int index, std::map<std::string, SubjectHistory>& nodes) {
  const std::set<int> blamed = blamedNodes(run);
  for (int i = 0; i < static_cast<int>(run.nodes.size()); ++i) {
    const double bw = i < run.matrices.nodeBw.n ? nodeBandwidth(run.matrices.nodeBw, i) : kNoValue;
    const bool isBlamed = blamed.count(i) > 0;
    if (!std::isfinite(bw) && !isBlamed) continue;
    SubjectHistory& s = nodes[run.nodes[static_cast<std::size_t>(i)]];
    s.a = run.nodes[static_cast<std::size_t>(i)];
    s.runs.push_back({index, bw, isBlamed});
  }
}

// Each pair of `pairs` (by name) that a run measured or blamed: its run.
void addPairs(const results::RunDigest& run, int index,
              std::map<std::pair<std::string, std::string>, SubjectHistory>& pairs) {
  const std::set<NodePair> blamed = blamedPairs(run);
  std::map<std::string, int> byName;
  for (int i = 0; i < static_cast<int>(run.nodes.size()); ++i)
    byName.emplace(run.nodes[static_cast<std::size_t>(i)], i);
  for (auto& [names, s] : pairs) {
    const auto a = byName.find(names.first);
    const auto b = byName.find(names.second);
    if (a == byName.end() || b == byName.end()) continue;
    const NodePair p{std::min(a->second, b->second), std::max(a->second, b->second)};
    const bool isBlamed = blamed.count(p) > 0;
    const double bw =
        p.second < run.matrices.nodeBw.n ? pairBandwidth(run.matrices.nodeBw, p.first, p.second) : kNoValue;
    if (std::isfinite(bw) || isBlamed) s.runs.push_back({index, bw, isBlamed});
  }
}

template <class Key>
std::vector<SubjectHistory> finished(std::map<Key, SubjectHistory>& subjects, const std::vector<HistoryRunInfo>& runs) {
  std::vector<SubjectHistory> out;
  for (auto& [key, s] : subjects) {
    if (s.runs.empty()) continue;
    finish(s, runs);
    out.push_back(std::move(s));
  }
  return out;
}

double robustSpread(const std::vector<double>& values, double median) {
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (double v : values) deviations.push_back(std::fabs(v - median));
  return 1.4826 * core::median(std::move(deviations));
}

}  // namespace

std::string_view name(SubjectStatus s) {
  switch (s) {
    case SubjectStatus::kClean:
      return "clean";
    case SubjectStatus::kBlamed:
      return "blamed";
    case SubjectStatus::kFlapping:
      return "flapping";
    case SubjectStatus::kNewlyBlamed:
      return "newly_blamed";
  }
  return "clean";
}

std::vector<double> SubjectHistory::bandwidths() const {
  std::vector<double> out;
  for (const SubjectRun& r : runs) {
    if (std::isfinite(r.bandwidth)) out.push_back(r.bandwidth);
  }
  return out;
}

double nodeBandwidth(const core::Matrix& nodeBw, int node) {
  std::vector<double> cells;
  nodeBw.forEachInRow(node, [&](int col, float v) {
    if (col != node) cells.push_back(v);
  });
  for (int row = 0; row < nodeBw.n; ++row) {
    const float v = row == node ? NAN : nodeBw.at(row, node);
    if (std::isfinite(v)) cells.push_back(v);
  }
  return core::median(std::move(cells));
}

double pairBandwidth(const core::Matrix& nodeBw, int a, int b) {
  const float ab = nodeBw.at(a, b);
  const float ba = nodeBw.at(b, a);
  if (!std::isfinite(ab)) return std::isfinite(ba) ? ba : kNoValue;
  return std::isfinite(ba) ? std::min(ab, ba) : ab;
}

std::string sparkline(const std::vector<double>& values) {
  static constexpr const char* kLevels[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  double lo = INFINITY;
  double hi = -INFINITY;
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  std::string out;
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    const long level = hi > lo ? std::lround((v - lo) / (hi - lo) * 7) : 3;
    out += kLevels[std::clamp(level, 0L, 7L)];
  }
  return out;
}

std::vector<HostCluster> clustersOf(std::vector<HistoryRunInfo>& runs) {
  std::vector<std::size_t> parent(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) parent[i] = i;
  std::map<std::string, std::size_t> firstRun;  // host -> the first run that had it
  for (std::size_t i = 0; i < runs.size(); ++i) {
    for (const std::string& host : runs[i].hosts) {
      const auto [it, added] = firstRun.emplace(host, i);
      if (!added) parent[rootOf(parent, i)] = rootOf(parent, it->second);
    }
  }
  std::vector<HostCluster> clusters;
  std::map<std::size_t, int> index;  // root -> cluster, numbered by first run
  std::vector<std::set<std::string>> hosts;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto [it, added] = index.emplace(rootOf(parent, i), static_cast<int>(clusters.size()));
    if (added) {
      clusters.emplace_back();
      hosts.emplace_back();
    }
    runs[i].cluster = it->second;
    clusters[static_cast<std::size_t>(it->second)].runs.push_back(static_cast<int>(i));
    hosts[static_cast<std::size_t>(it->second)].insert(runs[i].hosts.begin(), runs[i].hosts.end());
  }
  for (std::size_t c = 0; c < clusters.size(); ++c) clusters[c].hosts.assign(hosts[c].begin(), hosts[c].end());
  return clusters;
}

std::vector<std::string> clusterWarnings(const std::vector<HostCluster>& clusters) {
  if (clusters.size() < 2) return {};
  std::size_t runs = 0;
  std::vector<std::string> parts;
  for (std::size_t c = 0; c < clusters.size(); ++c) {
    runs += clusters[c].runs.size();
    parts.push_back(fmt::format("cluster {}: {} run{} on {}", c + 1, clusters[c].runs.size(),
                                clusters[c].runs.size() == 1 ? "" : "s", hostsText(clusters[c].hosts)));
  }
  return {fmt::format("the {} runs mix {} clusters (host sets that share no host; {}): each node's history is its "
                      "own, but the run counts and a baseline span them all; give one cluster's files",
                      runs, clusters.size(), fmt::join(parts, "; "))};
}

History buildHistory(std::vector<results::RunDigest> runs, std::vector<SkippedFile> skipped) {
  std::sort(runs.begin(), runs.end(), [](const results::RunDigest& x, const results::RunDigest& y) {
    return std::tie(x.provenance.createdUtc, x.path) < std::tie(y.provenance.createdUtc, y.path);
  });
  History h;
  h.skipped = std::move(skipped);
  std::map<std::string, SubjectHistory> nodes;
  std::map<std::pair<std::string, std::string>, SubjectHistory> pairs;
  for (const results::RunDigest& run : runs) {
    h.runs.push_back(infoOf(run));
    for (NodePair p : blamedPairs(run)) {
      const auto names = pairNames(run, p);
      pairs[names].a = names.first;
      pairs[names].b = names.second;
    }
  }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    addNodes(runs[i], static_cast<int>(i), nodes);
    addPairs(runs[i], static_cast<int>(i), pairs);
  }
  h.nodes = finished(nodes, h.runs);
  h.pairs = finished(pairs, h.runs);
  h.clusters = clustersOf(h.runs);
  h.warnings = clusterWarnings(h.clusters);
  return h;
}

// ---- baseline

double Spread::bar() const { return median - kBaselineSigmas * std::max(spread, kBaselineMinSpread * median); }

Spread spreadOf(const std::vector<double>& values) {
  std::vector<double> finite;
  std::copy_if(values.begin(), values.end(), std::back_inserter(finite), [](double v) { return std::isfinite(v); });
  Spread s;
  s.runs = static_cast<int>(finite.size());
  if (finite.empty()) return s;
  s.median = core::median(finite);
  s.spread = robustSpread(finite, s.median);
  const auto [lo, hi] = std::minmax_element(finite.begin(), finite.end());
  s.min = *lo;
  s.max = *hi;
  return s;
}

std::map<std::string, double> classBandwidths(const core::Matrices& m) {
  std::map<std::string, double> out;
  if (!m.pairsMeasured) return out;
  for (std::size_t c = 1; c < core::kLinkClasses; ++c) {
    const double bw = m.classExpected[c].bandwidth;
    if (std::isfinite(bw) && bw > 0 && m.classExpectedFrom[c].empty()) {
      out.emplace(core::name(static_cast<core::LinkClass>(c)), bw);
    }
  }
  if (std::isfinite(m.nodeExpected.bandwidth) && m.nodeExpected.bandwidth > 0)
    out.emplace("node", m.nodeExpected.bandwidth);
  return out;
}

std::map<CollectiveKey, double> collectiveBandwidths(const std::vector<core::CollectiveRecord>& rows) {
  std::map<CollectiveKey, std::vector<double>> groups;
  for (const core::CollectiveRecord& r : rows) {
    if (r.inPlace || (r.checked && r.wrong > 0) || !(std::isfinite(r.busbw) && r.busbw > 0)) continue;
    groups[{r.scope, r.op, r.dtype, r.bytes}].push_back(r.busbw);
  }
  std::map<CollectiveKey, double> out;
  for (auto& [key, values] : groups) out.emplace(key, core::median(std::move(values)));
  return out;
}

Baseline buildBaseline(const std::vector<results::RunDigest>& runs) {
  Baseline b;
  b.runs = static_cast<int>(runs.size());
  std::map<std::string, std::vector<double>> classes;
  std::map<CollectiveKey, std::vector<double>> collectives;
  for (const results::RunDigest& run : runs) {
    const std::string& t = run.provenance.createdUtc;
    if (b.firstUtc.empty() || t < b.firstUtc) b.firstUtc = t;
    b.lastUtc = std::max(b.lastUtc, t);
    for (const auto& [population, bw] : classBandwidths(run.matrices)) classes[population].push_back(bw);
    for (const auto& [key, bw] : collectiveBandwidths(run.collectives)) collectives[key].push_back(bw);
  }
  for (const auto& [population, values] : classes) b.classes.push_back({population, spreadOf(values)});
  for (const auto& [key, values] : collectives) b.collectives.push_back({key, spreadOf(values)});
  return b;
}

results::ResultsFile baselineAsFile(const Baseline& b) {
  results::ResultsFile f;
  f.path = b.path;
  f.complete = true;
  f.provenance.createdUtc = b.lastUtc;
  for (const CollectiveBaseline& c : b.collectives) {
    core::CollectiveRecord r;
    r.scope = c.key.scope;
    r.op = c.key.op;
    r.dtype = c.key.dtype;
    r.bytes = c.key.bytes;
    r.busbw = c.figure.median;
    r.busbwMedian = c.figure.median;
    f.collectives.push_back(std::move(r));
  }
  f.matrices.pairsMeasured = !b.classes.empty();
  for (std::size_t c = 0; c < core::kLinkClasses; ++c) f.matrices.classExpected[c].bandwidth = kNoValue;
  f.matrices.nodeExpected.bandwidth = kNoValue;
  for (const ClassBaseline& c : b.classes) {
    if (c.population == "node") f.matrices.nodeExpected.bandwidth = c.figure.median;
    for (std::size_t k = 1; k < core::kLinkClasses; ++k) {
      if (core::name(static_cast<core::LinkClass>(k)) == c.population)
        f.matrices.classExpected[k].bandwidth = c.figure.median;
    }
  }
  return f;
}

}  // namespace fabricmap::orchestrator
