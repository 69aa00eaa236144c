// Side-by-side comparison of results files (`fabricmap compare`): runs or providers summarized in
// the same terms (topology, collective peaks and plateaus, scaling across one-node files, pairwise
// spread, findings, a predicted training step priced at each file's own offer), every figure that
// differs from the first file's beyond a tolerance marked, and a caveat on each row whose files
// measured different things (a one-node world against a network, other sizes). Pure code: the
// command reads the files and prints.
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
#include "orchestrator/verdicts/providers.h"
#include "results/busbw_peak.h"
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

// The peak: one definition for every view (results/busbw_peak.h, SCHEMA.md "Peak busbw"): per
// group the highest busbw over its sizes (from the mean time, as nccl-tests prints it),
// out-of-place and in-place apart, rows with wrong results left out; the median over groups.
using PlacementPeak = results::BusbwPeak;
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
  // every rank on one node: its world scope is the node's inside (NVLink or PCIe, no network), and
  // answers for its intra scope too (scope_model.h)
  bool oneNode = false;
  bool intraFromWorld = false;  // its intra figures are its world rows (it measured no intra itself)
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
  std::optional<double> pricePerGpuHour;  // USD, the offer's (providers.h)
  std::string priceFrom;
  std::optional<double> gpuMemoryBytes;  // per GPU: the offer's, else the smallest the file records
  std::string memoryFrom;
  // with a model: what the layout needs per GPU (memory_model.h, as predict and advise count it)
  std::optional<double> memoryNeededBytes;
  std::string memoryModel;  // what that counts, for people
};

// A file's figures in compare's terms. A one-node file's world rows answer for its intra scope too
// (judgedCollectives). `offer` sets the price its prediction's cost uses (over the config's) and
// its GPU memory where given.
FileSummary summarize(const results::ResultsFile& file, std::string label, const PredictConfig* predictConfig,
                      const Offer& offer = {});

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
  // why the files' figures on this row may not measure the same thing (a one-node world against a
  // multi-node one, different node counts or group sizes, plateaus or sweeps over other sizes,
  // scaling measured on other hosts); empty when they do
  std::vector<std::string> caveats;
};

struct Comparison {
  double tolerance = 0.1;
  std::vector<FileSummary> files;
  std::vector<CompareRow> rows;
};

// Scaling across files (`scaling.<op>.efficiency`): each one-node file's world busbw plateau over
// that of the one-node file with the fewest GPUs of the same GPU model measuring the op; nccl-tests'
// busbw stays constant under perfect scaling, so 1.0 is linear (verify's profiles ask 0.8).
inline constexpr std::string_view kScalingRule =
    "one-node files of one GPU model: world busbw plateau / that of the file with the fewest GPUs (1.0: linear)";

// Throws UsageError for a tolerance that is negative or not finite, or no files.
Comparison compare(std::vector<FileSummary> files, double tolerance);

// `fabricmap compare --json` (README.md documents it).
nlohmann::ordered_json comparisonToJson(const Comparison& c);
// The text table: a column per file, differing cells marked "*", a legend.
std::string comparisonToText(const Comparison& c);

}  // namespace fabricmap::orchestrator
