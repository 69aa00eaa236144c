// Side-by-side comparison of results files (`fabricmap compare`): runs or providers summarized in
// the same terms (topology, collective plateaus, pairwise spread, findings, a predicted training
// step), and every figure that differs from the first file's beyond a tolerance marked. Pure code:
// the command reads the files and prints.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/analysis/plateau.h"
#include "orchestrator/verdicts/history.h"
#include "orchestrator/verdicts/predict.h"
#include "results/h5_reader.h"

namespace fabricmap::orchestrator {

struct NodeSummary {
  int node = 0;
  std::string name;
  std::string topologyClass;
  int gpus = 0;
  std::string gpuModel;  // the node's GPU names, ", "-joined; "" when none
};

struct WorstLink {
  int a = 0;
  int b = 0;
  double bandwidth = 0;  // GB/s
};

// One population of pairs: a rank link class ("nvswitch", "inter_node", ...) or the node matrix.
struct PairSummary {
  std::string population;  // the link class, or "node"
  int pairs = 0;
  double median = 0;  // GB/s, one direction
  double min = 0;
  std::vector<WorstLink> worst;  // the lowest three, lowest first
};

// nccl-tests' peak as its users read it off the table: per group the highest busbw over its rows
// (from the mean time: the figure nccl-tests prints, and `fabricmap run` in the same table), with
// out-of-place and in-place apart and rows with wrong results left out; over a scope's groups, the
// median. An imported log is one group, so this is the log's own largest busbw per placement.
struct PlacementPeak {
  double busbw = std::numeric_limits<double>::quiet_NaN();  // GB/s; NaN: no usable row
  std::uint64_t bytes = 0;  // the size of the peak row when the scope has one group; 0 with several
  int groups = 0;           // groups with a usable row
};
struct CollectivePeak {
  std::string scope;
  std::string op;
  PlacementPeak outOfPlace;  // `compare`'s peak row
  PlacementPeak inPlace;     // shown beside it
};

// The peaks of `scope`/`op` (nccl-tests op name) in `rows`.
CollectivePeak peakOf(const std::vector<core::CollectiveRecord>& rows, std::string_view scope, std::string_view op);

struct FileSummary {
  std::string label;
  std::string path;
  std::string backend;
  bool complete = false;
  int ranks = 0;
  int nodeCount = 0;
  int ranksPerNode = 0;
  int gpus = 0;
  std::vector<NodeSummary> nodes;
  std::map<std::string, int> classes;    // topology class -> nodes
  std::map<std::string, int> gpuModels;  // GPU name -> GPUs
  std::vector<Plateau> plateaus;         // per scope and op measured
  std::vector<CollectivePeak> peaks;     // per scope and op measured, in the plateaus' order of scopes
  std::vector<PairSummary> pairs;        // rank link classes, then "node"
  std::map<std::string, double> classBaselines;  // what the analysis judged each class against (classBandwidths)
  bool baseline = false;  // a run history's baseline (summarizeBaseline): figures only, no files or topology
  std::map<std::string, int> findings;   // severity -> count (error, warning, info always present)
  std::optional<Prediction> prediction;
  std::string predictionError;  // why no prediction when one was asked for
};

FileSummary summarize(const results::ResultsFile& file, std::string label, const PredictConfig* predictConfig);

// A run history's baseline as compare's column: its medians (history.h baselineAsFile).
FileSummary summarizeBaseline(const Baseline& baseline);

// One figure across the files: cells in file order, the first file the reference.
struct CompareCell {
  std::optional<double> value;  // numeric figures
  std::string text;             // as printed; "-" where the file has no such figure
  std::optional<double> ratio;  // value / the reference's value
  bool differs = false;         // beyond the tolerance (text: not equal) from the reference
};
struct CompareRow {
  std::string key;      // stable id, "collectives.intra.all_reduce.plateau_busbw"
  std::string section;  // "files", "topology", "collectives", "pairs", "findings", "prediction"
  std::string label;    // for people
  std::string unit;     // "GB/s", "s", "" ...
  bool compared = true;  // false: context (structure), never marked
  std::vector<CompareCell> cells;
};

struct Comparison {
  double tolerance = 0.1;
  std::vector<FileSummary> files;
  std::vector<CompareRow> rows;
};

// Throws UsageError for a tolerance that is negative or not finite, or no files.
Comparison compare(std::vector<FileSummary> files, double tolerance);

// `fabricmap compare --json` (README.md documents it).
nlohmann::ordered_json comparisonToJson(const Comparison& c);
// The text table: a column per file, differing cells marked "*", a legend.
std::string comparisonToText(const Comparison& c);

}  // namespace fabricmap::orchestrator
