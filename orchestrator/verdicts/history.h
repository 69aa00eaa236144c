// Run history (`fabricmap history`): many results files of the same cluster in time order, per node
// and node pair: how often each was measured and blamed, its bandwidth run by run, its trend, and
// whether its blame comes and goes (flapping); and the reference baseline over the runs (median and
// spread per link class and per collective) that `verify --baseline` and `compare --baseline` use.
// Pure code: the command reads the files (results/history_reader) and prints.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "results/history_reader.h"

namespace fabricmap::orchestrator {

inline constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();

// ---- history

// clean: never blamed; blamed: blamed in every run that saw it; flapping: blamed in a run and clean
// in a later one; newly_blamed: clean at first, then blamed in every run since its first blame.
enum class SubjectStatus { kClean, kBlamed, kFlapping, kNewlyBlamed };
std::string_view name(SubjectStatus s);

struct SubjectRun {
  int run = 0;                  // index into History::runs
  double bandwidth = kNoValue;  // GB/s; NaN when the run blamed it without measuring it
  bool blamed = false;
};

// A node (`b` empty) or a node pair (`a` < `b` by name).
struct SubjectHistory {
  std::string a;
  std::string b;
  std::vector<SubjectRun> runs;  // the runs that saw it (measured or blamed it), oldest first
  int measured = 0;              // runs with a bandwidth
  int blamed = 0;
  std::string firstSeen;  // created_utc of its first and last run
  std::string lastSeen;
  std::optional<double> trend;  // last bandwidth / median of the earlier ones (2+ measured runs)
  SubjectStatus status = SubjectStatus::kClean;
  std::string label() const { return b.empty() ? a : a + " <-> " + b; }
  std::vector<double> bandwidths() const;  // the measured ones, oldest first
};

struct HistoryRunInfo {
  std::string path;
  std::string createdUtc;
  std::string hostnames;
  std::string backend;
  int nodes = 0;
  int blames = 0;  // warning and error findings that name a node
  std::vector<std::string> hosts;  // its set of hosts, sorted (hostnames, else its node names)
  int cluster = 0;                 // index into History::clusters
};

// Runs of one cluster: their host sets are joined by shared hosts (run A shares a host with B, B
// with C). A cluster's runs use different nodes of it as allocations come and go, so runs on
// different but overlapping host sets are one cluster; runs sharing no host with the others are
// another, and history says so (it does not guess that two disjoint allocations are one machine
// room, nor split them: each node's history is keyed by its own name either way).
struct HostCluster {
  std::vector<std::string> hosts;  // every host of its runs, sorted
  std::vector<int> runs;           // indices into History::runs, oldest first
};

struct SkippedFile {
  std::string path;
  std::string reason;
};

struct History {
  std::vector<HistoryRunInfo> runs;  // oldest first
  std::vector<HostCluster> clusters;  // by their first run
  std::vector<std::string> warnings;  // the runs mix clusters: one line each, for stderr and JSON
  std::vector<SkippedFile> skipped;
  std::vector<SubjectHistory> nodes;  // by name
  std::vector<SubjectHistory> pairs;  // pairs blamed in at least one run, by name
};

// Runs in created_utc order (ties by path), keyed by their host sets into clusters (HostCluster),
// with a warning when there are several. A finding of severity warning or error blames the nodes
// its node_a/node_b name, and the pair when it names two.
History buildHistory(std::vector<results::RunDigest> runs, std::vector<SkippedFile> skipped);

// The clusters of runs whose host sets share hosts (HostCluster); sets each run's `cluster`.
std::vector<HostCluster> clustersOf(std::vector<HistoryRunInfo>& runs);
// The warning when `clusters` are several ("the 5 runs mix 2 clusters ..."); none for one.
std::vector<std::string> clusterWarnings(const std::vector<HostCluster>& clusters);

// A node's bandwidth in a run: the median of the finite cells of its row and column of the node
// matrix (what it sent and received); NaN when none.
double nodeBandwidth(const core::Matrix& nodeBw, int node);
// A pair's: the slower direction measured; NaN when neither was.
double pairBandwidth(const core::Matrix& nodeBw, int a, int b);
// ▁..█ scaled between the values' least and greatest (all equal: ▄); NaN left out.
std::string sparkline(const std::vector<double>& values);

nlohmann::ordered_json historyToJson(const History& h);
std::string historyToText(const History& h);
std::string historyToHtml(const History& h);

// ---- baseline

inline constexpr int kBaselineMinRuns = 3;          // fewer runs: the figure is not judged
inline constexpr double kBaselineSigmas = 3;        // verify's bar: median - k x spread
inline constexpr double kBaselineMinSpread = 0.02;  // the spread used is at least this share of the median

// Median and spread (1.4826 x median absolute deviation: a robust standard deviation) of one
// figure over the runs that have it.
struct Spread {
  int runs = 0;
  double median = kNoValue;
  double spread = kNoValue;
  double min = kNoValue;
  double max = kNoValue;
  // median - kBaselineSigmas x max(spread, kBaselineMinSpread x median)
  double bar() const;
};
Spread spreadOf(const std::vector<double>& values);

struct ClassBaseline {
  std::string population;  // a rank link class ("inter_node", "same_node_host", ...) or "node"
  Spread figure;           // GB/s
};
struct CollectiveKey {
  std::string scope;
  std::string op;
  std::string dtype;
  std::uint64_t bytes = 0;
  auto operator<=>(const CollectiveKey&) const = default;
};
struct CollectiveBaseline {
  CollectiveKey key;
  Spread figure;  // busbw GB/s
};
struct Baseline {
  std::string path;        // where it was read from ("" when built)
  std::string createdUtc;  // when and by which fabricmap it was written
  std::string toolVersion;
  int runs = 0;
  std::string firstUtc;
  std::string lastUtc;
  std::vector<ClassBaseline> classes;
  std::vector<CollectiveBaseline> collectives;
};

// A run's figure per link class: the bandwidth baseline the analysis judged the class against
// (/matrix/rank expected_<class>_bw; "node": /matrix/node expected_bw), where it was measured (a
// class whose baseline came from a GPU's reference spec is left out).
std::map<std::string, double> classBandwidths(const core::Matrices& m);
// A run's figure per collective: the median over groups (and reduction ops) of the out-of-place
// busbw of the rows of that scope, op, dtype and size, rows with wrong results left out.
std::map<CollectiveKey, double> collectiveBandwidths(const std::vector<core::CollectiveRecord>& rows);

Baseline buildBaseline(const std::vector<results::RunDigest>& runs);

nlohmann::ordered_json baselineToJson(const Baseline& b);
// Throws UsageError (one message) for text that is no fabricmap baseline.
Baseline baselineFromJson(const std::string& text, const std::string& path);
Baseline readBaseline(const std::string& path);

// The baseline as a results file of its medians (compare's reference column): collective rows of
// one group, the class baselines as the matrices' expected bandwidths.
results::ResultsFile baselineAsFile(const Baseline& b);

}  // namespace fabricmap::orchestrator
