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

namespace fabricmap::orchestrator {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kPeakRule =
    "nccl-tests' figure: per group the highest busbw (from the mean time) over its sizes, out-of-place (in-place on "
    "its own row), wrong rows left out; median over groups";

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

// One placement's peak: per group the highest usable row, then the median over groups.
PlacementPeak placementPeak(const std::vector<core::CollectiveRecord>& rows, std::string_view scope,
                            std::string_view op, bool inPlace) {
  std::map<int, const core::CollectiveRecord*> best;  // per group
  for (const core::CollectiveRecord& r : rows) {
    if (r.scope != scope || r.op != op || r.inPlace != inPlace) continue;
    if ((r.checked && r.wrong > 0) || !(std::isfinite(r.busbw) && r.busbw > 0)) continue;
    auto [it, added] = best.emplace(r.group, &r);
    if (!added && r.busbw > it->second->busbw) it->second = &r;
  }
  PlacementPeak p;
  p.groups = static_cast<int>(best.size());
  if (best.empty()) return p;
  std::vector<double> perGroup;
  for (const auto& [group, r] : best) perGroup.push_back(r->busbw);
  p.busbw = core::median(perGroup);
  if (best.size() == 1) p.bytes = best.begin()->second->bytes;
  return p;
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

  void number(std::size_t file, const std::string& key, const std::string& section, const std::string& label,
              const std::string& unit, std::optional<double> v, bool compared = true) {
    CompareCell& c = cell(key, section, label, unit, compared, file);
    if (v && std::isfinite(*v)) {
      c.value = *v;
      c.text = figure(*v);
    }
  }
  void text(std::size_t file, const std::string& key, const std::string& section, const std::string& label,
            std::string v, bool compared = true) {
    cell(key, section, label, "", compared, file).text = std::move(v);
  }
  std::vector<CompareRow> rows() && {
    // numbers before words of the same section keep related figures together
    std::stable_sort(rows_.begin(), rows_.end(),
                     [&](const CompareRow& a, const CompareRow& b) { return order(a) < order(b); });
    return std::move(rows_);
  }

 private:
  int order(const CompareRow& r) const {
    static const std::vector<std::string> kSections{"files", "topology", "collectives", "pairs", "findings",
                                                    "prediction"};
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

FileSummary summarize(const results::ResultsFile& file, std::string label, const PredictConfig* predictConfig) {
  FileSummary s;
  s.label = std::move(label);
  s.path = file.path;
  s.backend = file.provenance.backend;
  s.complete = file.complete;
  s.ranks = static_cast<int>(file.topology.ranks.size());
  s.nodeCount = static_cast<int>(file.topology.nodes.size());
  s.ranksPerNode = ranksPerNodeOf(file.topology);
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
  std::set<std::pair<std::string, std::string>> scopeOps;
  for (const core::CollectiveRecord& r : file.collectives) scopeOps.emplace(r.scope, r.op);
  for (const auto& [scope, op] : scopeOps) {
    if (auto p = plateauOf(file.collectives, scope, op)) s.plateaus.push_back(std::move(*p));
    s.peaks.push_back(peakOf(file.collectives, scope, op));
  }
  const auto byScope = [](const auto& a, const auto& b) {
    return scopeOrder(a.scope) != scopeOrder(b.scope) ? scopeOrder(a.scope) < scopeOrder(b.scope) : a.op < b.op;
  };
  std::stable_sort(s.plateaus.begin(), s.plateaus.end(), byScope);
  std::stable_sort(s.peaks.begin(), s.peaks.end(), byScope);
  if (file.hasMatrices) summarizePairs(file.matrices, s);
  s.classBaselines = classBandwidths(file.matrices);
  s.findings = {{"error", 0}, {"warning", 0}, {"info", 0}};
  for (const core::Finding& f : file.findings) ++s.findings[std::string(core::name(f.severity))];
  if (predictConfig != nullptr) {
    try {
      s.prediction = predict(*predictConfig, file);
    } catch (const core::UsageError& e) {
      s.predictionError = e.what();
    }
  }
  return s;
}

FileSummary summarizeBaseline(const Baseline& baseline) {
  FileSummary s = summarize(baselineAsFile(baseline), fmt::format("baseline ({} runs)", baseline.runs), nullptr);
  s.baseline = true;
  return s;
}

Comparison compare(std::vector<FileSummary> files, double tolerance) {
  if (files.empty()) throw core::UsageError("no results file to compare");
  if (!std::isfinite(tolerance) || tolerance < 0)
    throw core::UsageError(fmt::format("--tolerance must be 0 or more, got {}", tolerance));
  Comparison c;
  c.tolerance = tolerance;
  RowBuilder rows(files.size());
  for (std::size_t f = 0; f < files.size(); ++f) {
    const FileSummary& s = files[f];
    if (!s.baseline) {
      rows.number(f, "files.ranks", "files", "ranks", "", s.ranks, false);
      rows.number(f, "files.nodes", "files", "nodes", "", s.nodeCount, false);
      rows.number(f, "files.ranks_per_node", "files", "ranks per node", "", s.ranksPerNode, false);
      rows.text(f, "files.backend", "files", "backend", s.backend, false);
      rows.text(f, "files.complete", "files", "complete", s.complete ? "yes" : "no");
      rows.text(f, "topology.classes", "topology", "topology class (nodes)", counted(s.classes));
      rows.text(f, "topology.gpu_models", "topology", "GPU model (GPUs)", counted(s.gpuModels));
      rows.number(f, "topology.gpus", "topology", "GPUs", "", s.gpus);
    }
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
      rows.text(f, key + ".plateau_bytes", "collectives", what + " plateau sizes",
                p.fromBytes == p.toBytes
                    ? core::formatBytes(p.toBytes)
                    : fmt::format("{}..{}", core::formatBytes(p.fromBytes), core::formatBytes(p.toBytes)),
                false);
    }
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
    for (const auto& [severity, n] : s.findings) {
      if (!s.baseline) rows.number(f, "findings." + severity, "findings", "findings " + severity, "", n);
    }
    if (s.prediction) {
      const Prediction& p = *s.prediction;
      rows.number(f, "prediction.step_seconds", "prediction", "predicted step s", "s", p.stepSeconds);
      rows.number(f, "prediction.utilization", "prediction", "predicted GPU utilization %", "%",
                  p.utilization ? std::optional<double>(*p.utilization * 100) : std::nullopt);
      rows.number(f, "prediction.gpu_hours", "prediction", "predicted GPU-hours", "GPU-hours", p.gpuHours);
      if (p.cost) rows.number(f, "prediction.cost", "prediction", "predicted cost", "", p.cost);
    } else if (!s.predictionError.empty()) {
      rows.text(f, "prediction.step_seconds", "prediction", "predicted step s", "unknown");
    }
  }
  c.rows = std::move(rows).rows();
  for (CompareRow& r : c.rows) {
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
                       {"gpu_hours", orNull(s.prediction->gpuHours)},
                       {"cost", orNull(s.prediction->cost)},
                       {"unknown_reason", s.prediction->unknownReason}};
  } else {
    f["prediction"] = nullptr;
  }
  f["prediction_error"] = s.predictionError;
  return f;
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
          {"values", std::move(values)}};
}

}  // namespace

Json comparisonToJson(const Comparison& c) {
  Json files = Json::array();
  for (const FileSummary& s : c.files) files.push_back(fileToJson(s));
  Json rows = Json::array();
  for (const CompareRow& r : c.rows) rows.push_back(rowToJson(r));
  Json out;
  out["tolerance"] = c.tolerance;
  out["reference"] = c.files.front().label;
  out["plateau_rule"] =
      "median busbw (from the median time) over the sizes >= 1/4 of the largest measured, per group; median over "
      "groups";
  out["peak_rule"] = std::string(kPeakRule);
  out["files"] = std::move(files);
  out["rows"] = std::move(rows);
  return out;
}

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
    out += "\n";
  }
  out += fmt::format("#\n# * differs from the reference ({}) by more than {:.0f}% (text: not equal); - not measured\n",
                     c.files.front().label, c.tolerance * 100);
  out += "# plateau: per group the median busbw over the sizes >= 1/4 of the largest measured, then the median over "
         "groups\n";
  out += fmt::format("# peak: {}\n", kPeakRule);
  for (const FileSummary& s : c.files) {
    if (!s.predictionError.empty()) out += fmt::format("# {}: no prediction: {}\n", s.label, s.predictionError);
    if (s.prediction && !s.prediction->unknownReason.empty())
      out += fmt::format("# {}: {}\n", s.label, s.prediction->unknownReason);
  }
  return out;
}

}  // namespace fabricmap::orchestrator
