// Side-by-side comparison of results files: summaries, aligned rows, tolerance marks.
#include "orchestrator/verdicts/compare.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "core/error.h"
#include "core/stats.h"
#include "core/units.h"
#include "orchestrator/verdicts/memory_model.h"
#include "orchestrator/verdicts/scope_model.h"

namespace fabricmap::orchestrator {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kPeakRule = results::kPeakRule;
constexpr double kGiB = 1ull << 30;

// Scopes in the order a reader expects them, whatever order the files list them in.
int scopeOrder(const std::string& scope) {
  if (scope == "world") return 0;
  if (scope == "intra") return 1;
  if (scope == "inter") return 2;
  return 3;
}

std::string counted(const std::map<std::string, int>& counts) {
  if (counts.empty()) return "none";
  std::vector<std::string> parts;
  for (const auto& [what, n] : counts) parts.push_back(fmt::format("{} x{}", what, n));
  return fmt::format("{}", fmt::join(parts, ", "));
}

PairSummary pairSummary(std::string population, std::vector<WorstLink> links) {
  PairSummary s;
  s.population = std::move(population);
  s.pairs = static_cast<int>(links.size());
  std::vector<double> values;
  for (const WorstLink& l : links) values.push_back(l.bandwidth);
  s.median = core::median(values);
  std::sort(links.begin(), links.end(), [](const WorstLink& x, const WorstLink& y) {
    return x.bandwidth != y.bandwidth ? x.bandwidth < y.bandwidth : std::tie(x.a, x.b) < std::tie(y.a, y.b);
  });
  s.min = links.front().bandwidth;
  links.resize(std::min<std::size_t>(links.size(), 3));
  s.worst = std::move(links);
  return s;
}

void summarizePairs(const core::Matrices& m, FileSummary& s) {
  if (!m.pairsMeasured) return;
  const bool classes = m.rankLinkClass.n == m.rankUnidir.n;
  std::map<core::LinkClass, std::vector<WorstLink>> byClass;
  m.rankUnidir.forEachCell([&](int a, int b, float v) {
    if (a == b || v <= 0) return;
    const core::LinkClass c = classes ? m.rankLinkClass.at(a, b) : core::LinkClass::kInterNode;
    if (c != core::LinkClass::kSelf) byClass[c].push_back({a, b, v});
  });
  for (auto& [c, links] : byClass) s.pairs.push_back(pairSummary(std::string(core::name(c)), std::move(links)));
  std::vector<WorstLink> nodeLinks;
  m.nodeBw.forEachCell([&](int a, int b, float v) {
    if (a != b && v > 0) nodeLinks.push_back({a, b, v});
  });
  if (!nodeLinks.empty()) s.pairs.push_back(pairSummary("node", std::move(nodeLinks)));
}

// One placement's peak, as every view states it (results/busbw_peak.h).
PlacementPeak placementPeak(const std::vector<core::CollectiveRecord>& rows, std::string_view scope,
                            std::string_view op, bool inPlace) {
  results::BusbwPeakAccumulator peak;
  for (const core::CollectiveRecord& r : rows) {
    if (r.scope == scope && r.op == op && r.inPlace == inPlace) peak.add(r);
  }
  return peak.peak();
}

const CollectivePeak* findPeak(const FileSummary& s, const std::string& scope, const std::string& op) {
  const auto it = std::find_if(s.peaks.begin(), s.peaks.end(),
                               [&](const CollectivePeak& p) { return p.scope == scope && p.op == op; });
  return it == s.peaks.end() ? nullptr : &*it;
}

std::string figure(double v) {
  if (!std::isfinite(v)) return "-";
  return std::fabs(v) >= 1e4 ? fmt::format("{:.0f}", v) : fmt::format("{:.4g}", v);
}

// Rows are collected per key across files, then laid out in first-seen order.
class RowBuilder {
 public:
  explicit RowBuilder(std::size_t files) : files_(files) {}

  CompareCell& number(std::size_t file, const std::string& key, const std::string& section, const std::string& label,
                      const std::string& unit, std::optional<double> v, bool compared = true) {
    CompareCell& c = cell(key, section, label, unit, compared, file);
    if (v && std::isfinite(*v)) {
      c.value = *v;
      c.text = figure(*v);
    }
    return c;
  }
  void text(std::size_t file, const std::string& key, const std::string& section, const std::string& label,
            std::string v, bool compared = true) {
    cell(key, section, label, "", compared, file).text = std::move(v);
  }
  // A caveat on a row already made (once each).
  void caveat(const std::string& key, const std::string& text) {
    const auto it = std::find_if(rows_.begin(), rows_.end(), [&](const CompareRow& r) { return r.key == key; });
    if (it != rows_.end() && std::find(it->caveats.begin(), it->caveats.end(), text) == it->caveats.end())
      it->caveats.push_back(text);
  }
  std::vector<CompareRow> rows() && {
    // numbers before words of the same section keep related figures together
    std::stable_sort(rows_.begin(), rows_.end(),
                     [&](const CompareRow& a, const CompareRow& b) { return order(a) < order(b); });
    return std::move(rows_);
  }

 private:
  int order(const CompareRow& r) const {
    static const std::vector<std::string> kSections{"files",  "topology", "collectives", "scaling",
                                                    "pairs",  "findings", "prediction"};
    const auto it = std::find(kSections.begin(), kSections.end(), r.section);
    return static_cast<int>(it - kSections.begin());
  }
  CompareCell& cell(const std::string& key, const std::string& section, const std::string& label,
                    const std::string& unit, bool compared, std::size_t file) {
    auto it = std::find_if(rows_.begin(), rows_.end(), [&](const CompareRow& r) { return r.key == key; });
    if (it == rows_.end()) {
      CompareRow r;
      r.key = key;
      r.section = section;
      r.label = label;
      r.unit = unit;
      r.compared = compared;
      r.cells.assign(files_, CompareCell{std::nullopt, "-", std::nullopt, false});
      rows_.push_back(std::move(r));
      it = rows_.end() - 1;
    }
    return it->cells[file];
  }
  std::size_t files_;
  std::vector<CompareRow> rows_;
};

}  // namespace

CollectivePeak peakOf(const std::vector<core::CollectiveRecord>& rows, std::string_view scope, std::string_view op) {
  return {std::string(scope), std::string(op), placementPeak(rows, scope, op, false),
          placementPeak(rows, scope, op, true)};
}

namespace {

void summarizeTopology(const results::ResultsFile& file, FileSummary& s) {
  s.ranks = static_cast<int>(file.topology.ranks.size());
  s.nodeCount = static_cast<int>(file.topology.nodes.size());
  s.ranksPerNode = ranksPerNodeOf(file.topology);
  s.oneNode = isOneNode(file.topology);
  for (const core::NodeRecord& n : file.topology.nodes) {
    NodeSummary ns;
    ns.node = n.node;
    ns.name = n.name;
    ns.topologyClass = n.topologyClass.empty() ? "UNCLASSIFIED" : n.topologyClass;
    ns.gpus = n.gpus;
    std::set<std::string> names;
    for (const core::RankRecord& r : file.topology.ranks) {
      if (r.node == n.node && !r.gpuName.empty()) names.insert(r.gpuName);
    }
    ns.gpuModel = fmt::format("{}", fmt::join(names, ", "));
    ++s.classes[ns.topologyClass];
    s.gpus += n.gpus;
    s.nodes.push_back(std::move(ns));
  }
  for (const core::RankRecord& r : file.topology.ranks) {
    if (!r.gpuName.empty()) ++s.gpuModels[r.gpuName];
  }
}

// The judged rows (a one-node file's world rows answer for intra too), per scope and op.
void summarizeCollectives(const results::ResultsFile& file, FileSummary& s) {
  const std::vector<core::CollectiveRecord> rows = judgedCollectives(file);
  s.intraFromWorld = answeringScope(file, "intra") == "world" &&
                     std::any_of(file.collectives.begin(), file.collectives.end(),
                                 [](const core::CollectiveRecord& r) { return r.scope == "world"; });
  std::set<std::pair<std::string, std::string>> scopeOps;
  for (const core::CollectiveRecord& r : rows) scopeOps.emplace(r.scope, r.op);
  for (const auto& [scope, op] : scopeOps) {
    if (auto p = plateauOf(rows, scope, op)) s.plateaus.push_back(std::move(*p));
    s.peaks.push_back(peakOf(rows, scope, op));
  }
  const auto byScope = [](const auto& a, const auto& b) {
    return scopeOrder(a.scope) != scopeOrder(b.scope) ? scopeOrder(a.scope) < scopeOrder(b.scope) : a.op < b.op;
  };
  std::stable_sort(s.plateaus.begin(), s.plateaus.end(), byScope);
  std::stable_sort(s.peaks.begin(), s.peaks.end(), byScope);
}

// The offer's price and memory, and the prediction priced at the file's own price.
void summarizeOffer(const results::ResultsFile& file, const PredictConfig* predictConfig, const Offer& offer,
                    FileSummary& s) {
  // the file's own price line first, then --gpu-memory for every file; a contradiction of what the
  // file records is said beside the figure
  const bool offered = offer.gpuMemoryBytes.has_value();
  const std::optional<double> declared =
      offered ? offer.gpuMemoryBytes : predictConfig != nullptr ? predictConfig->gpuMemoryBytes : std::nullopt;
  const GpuMemoryChoice gpu = chooseGpuMemory(declared, offered ? offer.memoryFrom : "--gpu-memory", file);
  s.gpuMemoryBytes = gpu.bytes;
  s.memoryFrom = gpu.contradiction.empty() ? gpu.source : fmt::format("{} ({})", gpu.source, gpu.contradiction);
  s.pricePerGpuHour = offer.pricePerGpuHour;
  s.priceFrom = offer.priceFrom;
  if (predictConfig == nullptr) return;
  PredictConfig c = *predictConfig;
  if (offer.pricePerGpuHour) c.pricePerGpuHour = offer.pricePerGpuHour;
  if (offer.gpuMemoryBytes) c.gpuMemoryBytes = offer.gpuMemoryBytes;
  if (!s.pricePerGpuHour && c.pricePerGpuHour) {
    s.pricePerGpuHour = c.pricePerGpuHour;
    s.priceFrom = "--price-per-gpu-hour";
  }
  s.memoryNeededBytes = memoryPerGpu(c).total();
  s.memoryModel = memoryModelText(c);
  try {
    s.prediction = predict(c, file);
  } catch (const core::UsageError& e) {
    s.predictionError = e.what();
  }
  if (!s.prediction || !s.prediction->gpuMemoryBytes) return;
  // the memory the prediction checked against, named by where it came from
  if (declared) s.prediction->gpuMemorySource = s.memoryFrom;
  s.gpuMemoryBytes = s.prediction->gpuMemoryBytes;
  s.memoryFrom = s.prediction->gpuMemorySource;
}

}  // namespace

FileSummary summarize(const results::ResultsFile& file, std::string label, const PredictConfig* predictConfig,
                      const Offer& offer) {
  FileSummary s;
  s.label = std::move(label);
  s.path = file.path;
  s.backend = file.provenance.backend;
  s.complete = file.complete;
  summarizeTopology(file, s);
  summarizeCollectives(file, s);
  if (file.hasMatrices) summarizePairs(file.matrices, s);
  s.classBaselines = classBandwidths(file.matrices);
  s.findings = {{"error", 0}, {"warning", 0}, {"info", 0}};
  for (const core::Finding& f : file.findings) ++s.findings[std::string(core::name(f.severity))];
  summarizeOffer(file, predictConfig, offer, s);
  return s;
}

FileSummary summarizeBaseline(const Baseline& baseline) {
  FileSummary s = summarize(baselineAsFile(baseline), fmt::format("baseline ({} runs)", baseline.runs), nullptr);
  s.baseline = true;
  return s;
}

namespace {

std::string sizeRange(const Plateau& p) {
  return p.fromBytes == p.toBytes ? core::formatBytes(p.toBytes)
                                  : fmt::format("{}..{}", core::formatBytes(p.fromBytes), core::formatBytes(p.toBytes));
}

const Plateau* findPlateau(const FileSummary& s, std::string_view scope, std::string_view op) {
  const auto it = std::find_if(s.plateaus.begin(), s.plateaus.end(),
                               [&](const Plateau& p) { return p.scope == scope && p.op == op; });
  return it == s.plateaus.end() ? nullptr : &*it;
}

void addFileRows(RowBuilder& rows, std::size_t f, const FileSummary& s) {
  if (s.baseline) return;
  rows.number(f, "files.ranks", "files", "ranks", "", s.ranks, false);
  rows.number(f, "files.nodes", "files", "nodes", "", s.nodeCount, false);
  rows.number(f, "files.ranks_per_node", "files", "ranks per node", "", s.ranksPerNode, false);
  rows.text(f, "files.backend", "files", "backend", s.backend, false);
  rows.text(f, "files.complete", "files", "complete", s.complete ? "yes" : "no");
  if (s.pricePerGpuHour) rows.number(f, "files.price", "files", "price USD per GPU-hour", "USD", s.pricePerGpuHour);
  rows.text(f, "topology.classes", "topology", "topology class (nodes)", counted(s.classes));
  rows.text(f, "topology.gpu_models", "topology", "GPU model (GPUs)", counted(s.gpuModels));
  rows.number(f, "topology.gpus", "topology", "GPUs", "", s.gpus);
  if (s.gpuMemoryBytes)
    rows.number(f, "topology.gpu_memory", "topology", "GPU memory GiB (smallest GPU)", "GiB", *s.gpuMemoryBytes / kGiB);
}

void addCollectiveRows(RowBuilder& rows, std::size_t f, const FileSummary& s) {
  for (const Plateau& p : s.plateaus) {
    const std::string key = fmt::format("collectives.{}.{}", p.scope, p.op);
    const std::string what = fmt::format("{} {}", p.scope, p.op);
    if (!s.baseline) rows.number(f, key + ".nranks", "collectives", what + " ranks/group", "", p.nranks, false);
    if (const CollectivePeak* peak = findPeak(s, p.scope, p.op)) {
      rows.number(f, key + ".peak_busbw", "collectives", what + " peak busbw out-of-place GB/s", "GB/s",
                  peak->outOfPlace.busbw);
      rows.number(f, key + ".peak_busbw_in_place", "collectives", what + " peak busbw in-place GB/s", "GB/s",
                  peak->inPlace.busbw);
    }
    rows.number(f, key + ".plateau_busbw", "collectives", what + " plateau busbw GB/s", "GB/s", p.busbw);
    rows.text(f, key + ".plateau_bytes", "collectives", what + " plateau sizes", sizeRange(p), false);
  }
}

void addPairRows(RowBuilder& rows, std::size_t f, const FileSummary& s) {
  for (const PairSummary& p : s.pairs) {
    const std::string key = "pairs." + p.population;
    const std::string what = p.population == "node" ? "node pairs" : "rank pairs " + p.population;
    rows.number(f, key + ".median", "pairs", what + " median GB/s", "GB/s", p.median);
    rows.number(f, key + ".min", "pairs", what + " min GB/s", "GB/s", p.min);
    std::vector<std::string> worst;
    for (const WorstLink& l : p.worst) worst.push_back(fmt::format("{}->{} {}", l.a, l.b, figure(l.bandwidth)));
    rows.text(f, key + ".worst", "pairs", what + " worst", fmt::format("{}", fmt::join(worst, ", ")), false);
  }
  for (const auto& [population, bw] : s.classBaselines) {
    const std::string what = population == "node" ? "node pairs" : "rank pairs " + population;
    rows.number(f, "pairs." + population + ".baseline", "pairs", what + " class baseline GB/s", "GB/s", bw);
  }
}

// The predicted step of the same model and layout on each file, its days, GPU-hours and cost at
// the file's own price, and whether the layout fits the file's GPUs.
void addPredictionRows(RowBuilder& rows, std::size_t f, const FileSummary& s) {
  if (s.prediction) {
    const Prediction& p = *s.prediction;
    rows.number(f, "prediction.step_seconds", "prediction", "predicted step s", "s", p.stepSeconds);
    const auto percent = [](const std::optional<double>& v) { return v ? std::optional<double>(*v * 100) : v; };
    // named as predict names them: the step's MFU, and the share of the step spent in compute
    rows.number(f, "prediction.step_mfu", "prediction", "predicted step MFU %", "%", percent(p.stepMfu));
    rows.number(f, "prediction.utilization", "prediction", "predicted compute share of the step %", "%",
                percent(p.utilization));
    rows.number(f, "prediction.days", "prediction", "predicted days", "days", p.days);
    rows.number(f, "prediction.gpu_hours", "prediction", "predicted GPU-hours", "GPU-hours", p.gpuHours);
    if (p.cost) rows.number(f, "prediction.cost", "prediction", "predicted cost USD", "USD", p.cost);
  } else if (!s.predictionError.empty()) {
    rows.text(f, "prediction.step_seconds", "prediction", "predicted step s", "unknown");
  }
  if (s.memoryNeededBytes) {
    rows.number(f, "prediction.memory_per_gpu", "prediction", "predicted memory per GPU GiB", "GiB",
                *s.memoryNeededBytes / kGiB, false);
    rows.text(f, "prediction.fits", "prediction", "fits the GPU memory",
              !s.gpuMemoryBytes ? "unknown" : *s.memoryNeededBytes <= *s.gpuMemoryBytes ? "yes" : "no");
  }
}

std::string modelsOf(const FileSummary& s) {
  std::vector<std::string> models;
  for (const auto& [model, n] : s.gpuModels) models.push_back(model);
  return fmt::format("{}", fmt::join(models, ", "));
}

std::string hostsOf(const FileSummary& s) {
  std::vector<std::string> names;
  for (const NodeSummary& n : s.nodes) names.push_back(n.name);
  return fmt::format("{}", fmt::join(names, ","));
}

// "v1 (a, b); v2 (c)": the values of the labelled files when they are not all one; "" when they are.
std::string differingValues(const std::vector<std::pair<std::string, std::string>>& labelled) {
  std::vector<std::pair<std::string, std::vector<std::string>>> byValue;  // first-seen order
  for (const auto& entry : labelled) {
    const std::string& value = entry.second;  // named, not bound: clang 14 cannot capture a binding
    auto it = std::find_if(byValue.begin(), byValue.end(), [&value](const auto& v) { return v.first == value; });
    if (it == byValue.end()) it = byValue.insert(byValue.end(), {value, {}});
    it->second.push_back(entry.first);
  }
  if (byValue.size() < 2) return "";
  std::vector<std::string> parts;
  for (const auto& [value, labels] : byValue) parts.push_back(fmt::format("{} ({})", value, fmt::join(labels, ", ")));
  return fmt::format("{}", fmt::join(parts, "; "));
}

// Scaling inside one server across files (kScalingRule): files of one node measuring `op` in their
// world scope, grouped by GPU model; each against the group's file with the fewest GPUs.
void addScalingRows(RowBuilder& rows, const std::vector<FileSummary>& files, const std::string& op) {
  std::map<std::string, std::vector<std::size_t>> byModel;
  for (std::size_t f = 0; f < files.size(); ++f) {
    if (!files[f].baseline && files[f].oneNode && findPlateau(files[f], "world", op))
      byModel[modelsOf(files[f])].push_back(f);
  }
  const std::string key = fmt::format("scaling.{}.efficiency", op);
  for (const auto& [model, members] : byModel) {
    const auto fewest = std::min_element(members.begin(), members.end(),
                                         [&](std::size_t a, std::size_t b) { return files[a].ranks < files[b].ranks; });
    const FileSummary& small = files[*fewest];
    if (std::all_of(members.begin(), members.end(), [&](std::size_t f) { return files[f].ranks == small.ranks; }))
      continue;
    const Plateau& base = *findPlateau(small, "world", op);
    const char* unit = model.empty() ? "ranks" : "GPUs";
    for (std::size_t f : members) {
      const Plateau& p = *findPlateau(files[f], "world", op);
      const std::string label = fmt::format("scaling {}: busbw plateau / the fewest GPUs'", op);
      CompareCell& cell = rows.number(f, key, "scaling", label, "", p.busbw / base.busbw, false);
      cell.text += fmt::format(" ({}/{} {})", files[f].ranks, small.ranks, unit);
      if (const std::string hosts =
              differingValues({{small.label, hostsOf(small)}, {files[f].label, hostsOf(files[f])}});
          !hosts.empty()) {
        rows.caveat(key, "measured on other hosts: " + hosts);
      } else if (f != *fewest && hostsOf(small).find("localhost") != std::string::npos) {
        // logs printed on "localhost" name no machine: one server or two cannot be told
        rows.caveat(key, "the files name no host (localhost): whether they measured one server is unknown");
      }
      if (const std::string sizes = differingValues({{small.label, sizeRange(base)}, {files[f].label, sizeRange(p)}});
          !sizes.empty())
        rows.caveat(key, "plateau over " + sizes);
    }
  }
}

// The caveats of a collectives row: what makes its files' figures measure different things.
std::vector<std::string> collectiveCaveats(const std::vector<FileSummary>& files, const std::string& scope,
                                           const std::string& op, const std::string& what) {
  if (what != "peak_busbw" && what != "peak_busbw_in_place" && what != "plateau_busbw") return {};
  std::vector<std::pair<std::string, std::string>> spans, groups, plateaus;
  for (const FileSummary& s : files) {
    const Plateau* p = findPlateau(s, scope, op);
    if (p == nullptr) continue;
    plateaus.emplace_back(s.label, what == "plateau_busbw" ? sizeRange(*p) : core::formatBytes(p->toBytes));
    if (s.baseline) continue;
    groups.emplace_back(s.label, fmt::format("{} ranks", p->nranks));
    if (scope == "world")
      spans.emplace_back(s.label, s.oneNode ? "one node: NVLink/PCIe inside it, no network"
                                            : fmt::format("{} nodes: across the network", s.nodeCount));
    else if (scope == "inter")
      spans.emplace_back(s.label, fmt::format("{} nodes", s.nodeCount));
  }
  std::vector<std::string> out;
  if (std::string v = differingValues(spans); !v.empty()) out.push_back(fmt::format("{} scope: {}", scope, v));
  if (std::string v = differingValues(groups); !v.empty()) out.push_back("groups of " + v);
  if (std::string v = differingValues(plateaus); !v.empty())
    out.push_back((what == "plateau_busbw" ? "plateau over " : "sweep up to ") + v);
  return out;
}

// A prediction's days and cost are not achievable on GPUs the layout does not fit.
std::vector<std::string> predictionCaveats(const std::vector<FileSummary>& files, const std::string& key) {
  if (key != "prediction.step_seconds" && key != "prediction.days" && key != "prediction.gpu_hours" &&
      key != "prediction.cost")
    return {};
  std::vector<std::string> labels;
  for (const FileSummary& s : files) {
    if (s.prediction && !s.prediction->fitsMemory().value_or(true)) labels.push_back(s.label);
  }
  if (labels.empty()) return {};
  return {fmt::format("the layout does not fit the GPU memory of {}: not achievable there", fmt::join(labels, ", "))};
}

void addCaveats(std::vector<CompareRow>& rows, const std::vector<FileSummary>& files) {
  for (CompareRow& r : rows) {
    for (std::string& c : predictionCaveats(files, r.key)) r.caveats.push_back(std::move(c));
    if (r.section != "collectives") continue;
    // collectives.<scope>.<op>.<what>: scopes and op names hold no dot
    std::vector<std::string> parts;
    for (std::size_t from = 0; from <= r.key.size();) {
      const std::size_t dot = std::min(r.key.find('.', from), r.key.size());
      parts.push_back(r.key.substr(from, dot - from));
      from = dot + 1;
    }
    if (parts.size() != 4) continue;
    for (std::string& c : collectiveCaveats(files, parts[1], parts[2], parts[3])) r.caveats.push_back(std::move(c));
  }
}

void markDifferences(std::vector<CompareRow>& rows, double tolerance) {
  for (CompareRow& r : rows) {
    const CompareCell ref = r.cells.front();
    for (std::size_t f = 1; f < r.cells.size(); ++f) {
      CompareCell& cell = r.cells[f];
      if (cell.value && ref.value) {
        cell.ratio = *ref.value != 0 ? std::optional<double>(*cell.value / *ref.value) : std::nullopt;
        const double scale = std::fabs(*ref.value);
        cell.differs = r.compared && (scale > 0 ? std::fabs(*cell.value - *ref.value) > tolerance * scale
                                                : *cell.value != 0);
      } else if (!cell.value && !ref.value) {
        cell.differs = r.compared && cell.text != "-" && ref.text != "-" && cell.text != ref.text;
      }
    }
    if (r.cells.front().value) r.cells.front().ratio = 1.0;
  }
}

}  // namespace

Comparison compare(std::vector<FileSummary> files, double tolerance) {
  if (files.empty()) throw core::UsageError("no results file to compare");
  if (!std::isfinite(tolerance) || tolerance < 0)
    throw core::UsageError(fmt::format("--tolerance must be 0 or more, got {}", tolerance));
  Comparison c;
  c.tolerance = tolerance;
  RowBuilder rows(files.size());
  std::set<std::string> worldOps;
  for (std::size_t f = 0; f < files.size(); ++f) {
    const FileSummary& s = files[f];
    addFileRows(rows, f, s);
    addCollectiveRows(rows, f, s);
    addPairRows(rows, f, s);
    for (const auto& [severity, n] : s.findings) {
      if (!s.baseline) rows.number(f, "findings." + severity, "findings", "findings " + severity, "", n);
    }
    addPredictionRows(rows, f, s);
    for (const Plateau& p : s.plateaus) {
      if (p.scope == "world") worldOps.insert(p.op);
    }
  }
  for (const std::string& op : worldOps) addScalingRows(rows, files, op);
  c.rows = std::move(rows).rows();
  markDifferences(c.rows, tolerance);
  addCaveats(c.rows, files);
  c.files = std::move(files);
  return c;
}

namespace {

Json plateausToJson(const FileSummary& s) {
  Json plateaus = Json::array();
  const auto finiteOrNull = [](double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); };
  constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  for (const Plateau& p : s.plateaus) {
    Json groups = Json::array();
    for (const GroupPlateau& g : p.groups) groups.push_back({{"group", g.group}, {"ranks", g.ranks}, {"busbw_gbs", g.busbw}});
    const CollectivePeak* peak = findPeak(s, p.scope, p.op);
    plateaus.push_back({{"scope", p.scope},
                        {"from_scope", p.scope == "intra" && s.intraFromWorld ? "world" : p.scope},
                        {"op", p.op},
                        {"nranks", p.nranks},
                        {"peak_busbw_gbs", finiteOrNull(peak ? peak->outOfPlace.busbw : kNone)},
                        {"peak_busbw_in_place_gbs", finiteOrNull(peak ? peak->inPlace.busbw : kNone)},
                        {"plateau_busbw_gbs", p.busbw},
                        {"plateau_from_bytes", p.fromBytes},
                        {"plateau_to_bytes", p.toBytes},
                        {"plateau_sizes", p.sizes},
                        {"groups", std::move(groups)}});
  }
  return plateaus;
}

Json pairsToJson(const FileSummary& s) {
  Json pairs = Json::array();
  for (const PairSummary& p : s.pairs) {
    Json worst = Json::array();
    for (const WorstLink& l : p.worst) worst.push_back({{"a", l.a}, {"b", l.b}, {"bw_gbs", l.bandwidth}});
    pairs.push_back({{"population", p.population},
                     {"pairs", p.pairs},
                     {"median_gbs", p.median},
                     {"min_gbs", p.min},
                     {"worst", std::move(worst)}});
  }
  return pairs;
}

Json fileToJson(const FileSummary& s) {
  Json f;
  f["label"] = s.label;
  f["path"] = s.path;
  f["backend"] = s.backend;
  f["complete"] = s.complete;
  f["ranks"] = s.ranks;
  f["nodes"] = s.nodeCount;
  f["ranks_per_node"] = s.ranksPerNode;
  f["gpus"] = s.gpus;
  f["baseline"] = s.baseline;
  f["class_baselines"] = s.classBaselines;
  Json nodes = Json::array();
  for (const NodeSummary& n : s.nodes) {
    nodes.push_back({{"node", n.node}, {"name", n.name}, {"class", n.topologyClass}, {"gpus", n.gpus},
                     {"gpu_model", n.gpuModel}});
  }
  f["node_list"] = std::move(nodes);
  f["collectives"] = plateausToJson(s);
  f["pairs"] = pairsToJson(s);
  f["findings"] = s.findings;
  if (s.prediction) {
    const auto orNull = [](const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); };
    f["prediction"] = {{"step_seconds", orNull(s.prediction->stepSeconds)},
                       {"utilization", orNull(s.prediction->utilization)},
                       {"compute_share", orNull(s.prediction->utilization)},
                       {"step_mfu", orNull(s.prediction->stepMfu)},
                       {"gpu_hours", orNull(s.prediction->gpuHours)},
                       {"cost", orNull(s.prediction->cost)},
                       {"unknown_reason", s.prediction->unknownReason}};
  } else {
    f["prediction"] = nullptr;
  }
  f["prediction_error"] = s.predictionError;
  return f;
}

// What compare added for a purchasing memo: the offer and what the model needs.
void offerToJson(const FileSummary& s, Json& f) {
  const auto orNull = [](const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); };
  f["one_node"] = s.oneNode;
  f["price_per_gpu_hour"] = orNull(s.pricePerGpuHour);
  f["price_from"] = s.priceFrom;
  f["gpu_memory_bytes"] = orNull(s.gpuMemoryBytes);
  f["gpu_memory_from"] = s.memoryFrom;
  f["memory_per_gpu_needed_bytes"] = orNull(s.memoryNeededBytes);
  if (s.prediction) f["prediction"]["days"] = orNull(s.prediction->days);
}

Json rowToJson(const CompareRow& r) {
  Json values = Json::array();
  for (const CompareCell& cell : r.cells) {
    values.push_back({{"value", cell.value ? Json(*cell.value) : cell.text == "-" ? Json(nullptr) : Json(cell.text)},
                      {"ratio", cell.ratio ? Json(*cell.ratio) : Json(nullptr)},
                      {"differs", cell.differs}});
  }
  return {{"key", r.key},
          {"section", r.section},
          {"label", r.label},
          {"unit", r.unit},
          {"compared", r.compared},
          {"values", std::move(values)},
          {"caveats", r.caveats}};
}

}  // namespace

Json comparisonToJson(const Comparison& c) {
  Json files = Json::array();
  for (const FileSummary& s : c.files) {
    Json f = fileToJson(s);
    offerToJson(s, f);
    files.push_back(std::move(f));
  }
  Json rows = Json::array();
  for (const CompareRow& r : c.rows) rows.push_back(rowToJson(r));
  Json out;
  out["tolerance"] = c.tolerance;
  out["reference"] = c.files.front().label;
  out["plateau_rule"] =
      "median busbw (from the median time) over the sizes >= 1/4 of the largest measured, per group; median over "
      "groups";
  out["peak_rule"] = std::string(kPeakRule);
  out["scaling_rule"] = std::string(kScalingRule);
  out["files"] = std::move(files);
  out["rows"] = std::move(rows);
  return out;
}

namespace {

// Per file, where its figures came from when compare did not measure them: its intra scope, its
// price and GPU memory; and a file left out of a cost row for want of a price.
std::string notesText(const Comparison& c) {
  const auto hasRow = [&](std::string_view key) {
    return std::any_of(c.rows.begin(), c.rows.end(), [&](const CompareRow& r) { return r.key == key; });
  };
  const bool costRow = hasRow("prediction.cost");
  std::string out;
  for (const FileSummary& s : c.files) {
    if (s.intraFromWorld) out += fmt::format("# {}: {}\n", s.label, kIntraFromWorld);
    if (s.pricePerGpuHour)
      out += fmt::format("# {}: price {} USD per GPU-hour from {}\n", s.label, figure(*s.pricePerGpuHour), s.priceFrom);
    else if (costRow && s.prediction)
      out += fmt::format("# {}: no price (--price {}=USD, or a --providers line): no cost\n", s.label, s.label);
    if (s.gpuMemoryBytes)
      out += fmt::format("# {}: GPU memory {} GiB from {}\n", s.label, figure(*s.gpuMemoryBytes / kGiB), s.memoryFrom);
  }
  if (hasRow("prediction.fits"))
    out += fmt::format("# memory per GPU: {}\n", c.files.back().memoryModel);
  return out;
}

}  // namespace

std::string comparisonToText(const Comparison& c) {
  std::size_t labelWidth = 0;
  for (const CompareRow& r : c.rows) labelWidth = std::max(labelWidth, r.label.size());
  std::vector<std::size_t> widths;
  for (std::size_t f = 0; f < c.files.size(); ++f) {
    std::size_t w = c.files[f].label.size();
    for (const CompareRow& r : c.rows) w = std::max(w, r.cells[f].text.size() + 2);
    widths.push_back(w);
  }
  std::string out = fmt::format("# fabricmap compare: {} file{}, reference {}, tolerance {:.0f}%\n#\n", c.files.size(),
                                c.files.size() == 1 ? "" : "s", c.files.front().label, c.tolerance * 100);
  out += fmt::format("# {:<{}}", "", labelWidth);
  for (std::size_t f = 0; f < c.files.size(); ++f) out += fmt::format("  {:>{}}", c.files[f].label, widths[f]);
  out += "\n";
  std::string section;
  for (const CompareRow& r : c.rows) {
    if (r.section != section) {
      section = r.section;
      out += fmt::format("# {}\n", section);
    }
    out += fmt::format("  {:<{}}", r.label, labelWidth);
    for (std::size_t f = 0; f < c.files.size(); ++f) {
      const CompareCell& cell = r.cells[f];
      out += fmt::format("  {:>{}}", cell.text + (cell.differs ? " *" : "  "), widths[f]);
    }
    if (!r.caveats.empty()) out += fmt::format("  ! {}", fmt::join(r.caveats, "; "));
    out += "\n";
  }
  out += fmt::format("#\n# * differs from the reference ({}) by more than {:.0f}% (text: not equal); - not measured\n",
                     c.files.front().label, c.tolerance * 100);
  out += "# plateau: per group the median busbw over the sizes >= 1/4 of the largest measured, then the median over "
         "groups\n";
  out += fmt::format("# peak: {}\n", kPeakRule);
  if (std::any_of(c.rows.begin(), c.rows.end(), [](const CompareRow& r) { return !r.caveats.empty(); }))
    out += "# ! the files' figures on that row do not measure the same thing: read them with the caveat\n";
  if (std::any_of(c.rows.begin(), c.rows.end(), [](const CompareRow& r) { return r.section == "scaling"; }))
    out += fmt::format("# scaling: {}\n", kScalingRule);
  out += notesText(c);
  for (const FileSummary& s : c.files) {
    if (!s.predictionError.empty()) out += fmt::format("# {}: no prediction: {}\n", s.label, s.predictionError);
    if (s.prediction && !s.prediction->unknownReason.empty())
      out += fmt::format("# {}: {}\n", s.label, s.prediction->unknownReason);
  }
  return out;
}

}  // namespace fabricmap::orchestrator
