// Console tables (see console.h).
#include "results/console.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <map>
#include <functional>
#include <memory>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/units.h"
#include "results/busbw_peak.h"
#include "results/culprits.h"
#include "results/inventory_text.h"
#include "results/schema.h"

namespace fabricmap::results {
namespace {

// The key of a scope and op's in-place peaks beside its out-of-place ones ("world all_reduce").
constexpr const char* kInPlacePeakKey = " in-place";

std::string timeText(double us) { return us < 1e4 ? fmt::format("{:.2f}", us) : fmt::format("{:.0f}", us); }

std::string blockKeyOf(const core::StepRecord& s) {
  return s.scope + "/" + s.op + "/" + s.dtype + "/" + s.redop;
}

// Prints a header line without the padding right-aligned columns leave at its end.
void printTrimmed(std::FILE* out, std::string line) {
  line.erase(line.find_last_not_of(' ') + 1);
  fmt::print(out, "{}\n", line);
}

bool samePoint(const core::StepRecord& a, const core::StepRecord& b) {
  return blockKeyOf(a) == blockKeyOf(b) && a.bytes == b.bytes;
}

std::string upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return text;
}

// One culprit: its line (severity, kind, subject, how many findings, the worst figure, the
// highest confidence), then its evidence indented, the worst few only (the file has every row).
void printCulprit(std::FILE* out, const Culprit& c) {
  constexpr std::size_t kEvidenceShown = 3;
  const std::string_view level = core::name(c.severity);
  const std::string figure = figureText(c.worst());
  fmt::print(out, "#   {:<7} {} {}: {} finding{}{}, confidence {:.2f}\n",
             c.severity == core::Severity::kInfo ? "note" : upper(std::string(level)), core::name(c.kind), c.subject, c.count(), c.count() == 1 ? "" : "s",
             figure.empty() ? "" : (c.count() == 1 ? ", " : ", worst ") + figure, c.confidence);
  for (std::size_t i = 0; i < c.count() && i < kEvidenceShown; ++i) {
    fmt::print(out, "#             {}\n", c.evidence[i].message);
  }
  if (c.count() > kEvidenceShown) fmt::print(out, "#             ... and {} more\n", c.count() - kEvidenceShown);
}

}  // namespace

// The nodes' inventory: the most common line once, then each node whose line differs.
void ConsoleSink::printInventory(const core::Topology& topology) {
  if (topology.inventory.nodes.empty() || topology.nodes.empty()) return;  // a damaged file may have no nodes
  std::map<std::string, std::vector<std::size_t>> byLine;  // rows of topology.nodes
  for (std::size_t i = 0; i < topology.nodes.size(); ++i) {
    byLine[inventoryLine(topology, topology.nodes[i].node)].push_back(i);
  }
  const auto common = std::max_element(byLine.begin(), byLine.end(),
                                       [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
  fmt::print(out_, "# inventory: {} on {} of {} nodes\n", common->first, common->second.size(), topology.nodes.size());
  constexpr std::size_t kShown = 32;
  std::size_t shown = 0;
  for (const auto& [line, nodes] : byLine) {
    if (line == common->first) continue;
    for (const std::size_t i : nodes) {
      const core::NodeRecord& n = topology.nodes[i];
      if (shown++ < kShown) fmt::print(out_, "#   inventory node {:<3} {:<24} {}\n", n.node, n.name, line);
    }
  }
  if (shown > kShown) fmt::print(out_, "#   ... and {} more nodes that differ (/inventory in the file)\n", shown - kShown);
}

void ConsoleSink::begin(const core::Provenance& p, const core::Topology& topology,
                        const std::vector<core::ScopeRecord>& scopes) {
  fmt::print(out_, "# fabricmap {} ({}), backend {}, {} ranks on {} node{}{}\n", p.toolVersion,
             p.gitRevision, p.backend, p.worldSize, p.nodeCount, p.nodeCount == 1 ? "" : "s",
             p.emulated ? fmt::format(" (emulated: {} ranks per node)", p.ranksPerNode) : "");
  if (!p.mpiVersion.empty()) {  // none in an imported file
    fmt::print(out_, "# {}{}\n", p.mpiVersion, p.mpiTransport.empty() ? "" : " (" + p.mpiTransport + ")");
  }
  if (!p.ncclVersion.empty()) {
    fmt::print(out_, "# NCCL {}{}\n", p.ncclVersion,
               p.cudaRuntimeVersion.empty() && p.cudaDriverVersion.empty()
                   ? ""
                   : fmt::format(", CUDA runtime {}, driver {}", p.cudaRuntimeVersion, p.cudaDriverVersion));
  }
  if (!p.ucxVersion.empty() && (p.backend == "ucx" || !p.ucxEnvironment.empty())) {
    std::string settings = p.ucxEnvironment;
    std::replace(settings.begin(), settings.end(), '\n', ' ');
    fmt::print(out_, "# UCX {}{}\n", p.ucxVersion, settings.empty() ? "" : ", " + settings);
  }
  if (!p.slurmJobId.empty()) {
    fmt::print(out_, "# Slurm job {} on {}{}{}, launched by {}\n", p.slurmJobId, p.slurmNodelist,
               p.slurmPartition.empty() ? "" : ", partition " + p.slurmPartition,
               p.slurmGpusPerNode.empty() ? "" : ", GPUs per node " + p.slurmGpusPerNode, p.launcher);
  }
  if (const core::FabricGraph& g = topology.fabric; !g.devices.empty()) {
    const auto switches = std::count_if(g.devices.begin(), g.devices.end(),
                                        [](const core::FabricDevice& d) { return d.kind == core::FabricDeviceKind::kSwitch; });
    int levels = 0;
    for (const core::FabricDevice& d : g.devices) levels = std::max(levels, d.level);
    fmt::print(out_, "# fabric (/fabric): {} switches on {} level(s), {} host adapters, {} cables\n", switches, levels,
               static_cast<long>(g.devices.size()) - switches, g.links.size());
  }
  nodeNames_.clear();
  topology_ = topology;
  for (const auto& node : topology.nodes) {
    nodeNames_.push_back(node.name);
    std::vector<int> ranks;
    for (const auto& r : topology.ranks) {
      if (r.node == node.node) ranks.push_back(r.rank);
    }
    fmt::print(out_, "#   node {:<3} {:<24} ranks {:<12} gpus {} class {}\n", node.node,
               node.name, core::formatRanks(ranks), node.gpus, node.topologyClass);
  }
  printInventory(topology);
  for (const auto& s : scopes) {
    if (s.status == "waived") {
      fmt::print(out_, "# scope {}: waived ({})\n", s.scope, s.reason);
    } else {
      fmt::print(out_, "# scope {}: {} group{} [{}]\n", s.scope, s.groups, s.groups == 1 ? "" : "s",
                 s.members);
    }
  }
  std::fflush(out_);
}

void ConsoleSink::printBlockHeader(const core::StepRecord& step,
                                   const std::vector<core::CollectiveRecord>& rows) {
  const int nranks = rows.empty() ? 0 : rows.front().nranks;
  fmt::print(out_, "#\n# {} {}{} in scope {}: {} group{} of {} ranks\n", step.op, step.dtype,
             step.redop == "none" ? "" : " " + step.redop, step.scope, rows.size(),
             rows.size() == 1 ? "" : "s", nranks);
  // the row prefix (group .. root) is 55 characters wide, each placement 38
  printTrimmed(out_, fmt::format("#{:54}{:^38}{:^38}", "", "out-of-place", "in-place"));
  constexpr const char* kHeader =
      "#{:>6} {:>12} {:>12} {:>8} {:>6} {:>5}   {:>9} {:>8} {:>8} {:>7}   {:>9} {:>8} {:>8} {:>7}";
  printTrimmed(out_, fmt::format(kHeader, "group", "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong",
             "time", "algbw", "busbw", "#wrong"));
  printTrimmed(out_, fmt::format(kHeader, "", "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
             "(GB/s)", ""));
}

void ConsoleSink::printRows(const std::vector<core::CollectiveRecord>* oop,
                            const std::vector<core::CollectiveRecord>* ip) {
  const auto& any = oop != nullptr ? *oop : *ip;
  for (std::size_t g = 0; g < any.size(); ++g) {
    const core::CollectiveRecord& r = any[g];
    std::string line = fmt::format(" {:>6} {:>12} {:>12} {:>8} {:>6} {:>5}", r.group, r.bytes,
                                   r.count, r.dtype, r.redop, r.root);
    for (const auto* side : {oop, ip}) {
      if (side != nullptr && g < side->size()) {
        const auto& c = (*side)[g];
        line += fmt::format("   {:>9} {:>8.2f} {:>8.2f} {:>7}", timeText(c.timeUs.mean), c.algbw,
                            c.busbw, c.checked ? fmt::format("{}", c.wrong) : "N/A");
      } else {
        line += fmt::format("   {:>9} {:>8} {:>8} {:>7}", "-", "-", "-", "-");
      }
    }
    fmt::print(out_, "{}\n", line);
  }
  std::fflush(out_);
}

void ConsoleSink::flushPending() {
  if (!pending_) return;
  printRows(&pending_->rows, nullptr);
  pending_.reset();
}

void ConsoleSink::step(const core::StepRecord& step, const core::StepRows& rows) {
  std::visit(core::Overloaded{
                 [&](std::span<const core::CollectiveRecord> r) { collectiveStep(step, {r.begin(), r.end()}); },
                 [&](std::span<const core::CopyRecord> r) { copyStep(step, r); },
                 [&](std::span<const core::PairRecord> r) { pairStep(step, r); },
                 [&](std::span<const core::ScalingRecord> r) { scalingStep(step, r); },
                 [&](std::span<const core::TrainingRecord> r) { trainingStep(step, r); },
                 [&](std::span<const core::StorageRecord> r) { storageStep(step, r); },
                 [&](const auto&) {
                   flushPending();
                   ++stepsRun_;
                 },
             },
             rows);
}

void ConsoleSink::collectiveStep(const core::StepRecord& step, const std::vector<core::CollectiveRecord>& rows) {
  if (step.status == "waived") {
    ++stepsWaived_;
    const std::string key = blockKeyOf(step) + "|" + step.reason;
    if (waiversShown_.insert(key).second) {
      flushPending();
      fmt::print(out_, "# waived: {} {} in scope {}: {}\n", step.op, step.dtype, step.scope,
                 step.reason);
    }
    return;
  }
  ++stepsRun_;
  if (step.noisy) {
    noisy_.push_back(fmt::format("{} {} {} {} {}", step.scope, step.op, step.dtype, core::formatBytes(step.bytes),
                                 step.inPlace ? "in-place" : "out-of-place"));
  }
  for (const auto& r : rows) {
    wrong_ += r.wrong;
    checked_ = checked_ || r.checked;
  }

  // Peaks per (scope, op) and group, as every view states them (results/busbw_peak.h): out-of-place,
  // wrong results left out; the in-place figure under its own key, printed beside it.
  const std::string peakKey = step.scope + " " + step.op + (step.inPlace ? kInPlacePeakKey : "");
  auto it = std::find_if(peaks_.begin(), peaks_.end(),
                         [&](const auto& p) { return p.first == peakKey; });
  if (it == peaks_.end()) {
    peaks_.emplace_back(peakKey, std::map<int, Peak>{});
    it = std::prev(peaks_.end());
  }
  for (const auto& r : rows) {
    if (!countsTowardPeak(r)) continue;
    Peak& peak = it->second[r.group];
    if (r.busbw > peak.busbw) peak = {r.busbw, r.bytes};
  }

  // An out-of-place row waits for its in-place partner so both print on one line.
  if (pending_ && step.inPlace && samePoint(pending_->step, step)) {
    printRows(&pending_->rows, &rows);
    pending_.reset();
    return;
  }
  flushPending();
  if (blockKeyOf(step) != blockKey_) {
    blockKey_ = blockKeyOf(step);
    printBlockHeader(step, rows);
  }
  if (step.inPlace) {
    printRows(nullptr, &rows);
  } else {
    pending_ = Pending{step, rows};
  }
}

void ConsoleSink::copyStep(const core::StepRecord& step, std::span<const core::CopyRecord> copies) {
  flushPending();
  if (step.status == "waived") {
    ++stepsWaived_;
    if (waiversShown_.insert("copies|" + step.reason).second) {
      fmt::print(out_, "# waived: GPU-pair copies: {}\n", step.reason);
    }
    return;
  }
  checked_ = true;  // every copy direction is checked
  for (const auto& c : copies) wrong_ += c.wrong;
  if (copySteps_++ == 0 && !copies.empty()) {
    fmt::print(out_, "#\n# GPU-pair copies inside each node: {} per copy, {} copies per direction; one pair "
                     "per node at a time\n",
               core::formatBytes(copies.front().bytes), copies.front().iters);
  }
  std::fflush(out_);
}

void ConsoleSink::pairStep(const core::StepRecord& step, std::span<const core::PairRecord> pairs) {
  flushPending();
  if (step.op == "retest") {
    ++pairRetests_;
  } else {
    ++pairRounds_;
  }
  checked_ = true;  // every pair's transfers are checked
  for (const auto& p : pairs) wrong_ += p.wrong;
  if (pairs.empty() || !pairLevelsShown_.insert(step.scope + step.op).second) return;
  const core::PairRecord& p = pairs.front();
  if (step.op == "retest") {
    fmt::print(out_, "# pairwise {} pairs: re-measuring pairs that looked slow\n", step.scope);
  } else {
    fmt::print(out_, "#\n# pairwise {} pairs: {} messages, window {}, {} iterations; rounds of disjoint pairs\n",
               step.scope, core::formatBytes(p.bytes), p.window, p.iters);
  }
  std::fflush(out_);
}

void ConsoleSink::layout(const std::string& layout, const std::vector<core::LayoutPlace>& places) {
  flushPending();
  fmt::print(out_, "#\n# training pattern, layout {} over {} ranks (Megatron-LM order: TP innermost, then PP, DP)\n",
             layout, places.size());
  std::fflush(out_);
}

void ConsoleSink::scalingStep(const core::StepRecord& step, std::span<const core::ScalingRecord> rows) {
  flushPending();
  ++stepsRun_;
  if (step.noisy) noisy_.push_back(fmt::format("scaling {} {}", step.scope, step.op));
  checked_ = true;  // the all_reduce is checked
  for (const auto& r : rows) wrong_ += r.wrong;
  if (scalingSteps_++ == 0 && !rows.empty()) {
    fmt::print(out_, "#\n# scaling: all_reduce of {} per rank on growing groups (the slowest group shown); efficiency = "
                     "busbw / the best busbw at a smaller group\n",
               core::formatBytes(rows.front().bytes));
    fmt::print(out_, "# {:>6} {:>5} {:>14} {:>12} {:>9} {:>9} {:>10}\n", "level", "n", "groups x ranks", "time (us)",
               "algbw", "busbw", "efficiency");
  }
  for (const auto& r : rows) {
    fmt::print(out_, "  {:>6} {:>5} {:>14} {:>12.1f} {:>9.2f} {:>9.2f} {:>10.2f}{}\n", r.level, r.n,
               fmt::format("{} x {}", r.groups, r.nranks), r.timeUs.median, r.algbw, r.busbw, r.efficiency,
               r.noisy ? "  noisy" : "");
  }
  std::fflush(out_);
}

void ConsoleSink::storageStep(const core::StepRecord& /*step*/, std::span<const core::StorageRecord> rows) {
  flushPending();
  ++stepsRun_;
  if (storageSteps_++ == 0) {
    fmt::print(out_, "#\n# storage feed (/storage): each node's reading ranks at once, the slowest rank's time\n");
    fmt::print(out_, "# {:>8} {:>6} {:>5} {:>10} {:>10} {:>10} {:>10}  {}\n", "test", "node", "ranks", "bytes", "GB/s",
               "IOPS", "block", "page cache");
  }
  for (const auto& r : rows) {
    if (r.level == "rank") continue;
    fmt::print(out_, "  {:>8} {:>6} {:>5} {:>10} {:>10.3f} {:>10.0f} {:>10}  {}\n", r.test,
               r.level == "all" ? std::string("all") : std::to_string(r.node), r.ranks, core::formatBytes(r.bytes),
               r.gbps, r.iops, core::formatBytes(r.blockBytes), r.cache);
  }
  std::fflush(out_);
}

void ConsoleSink::trainingStep(const core::StepRecord& step, std::span<const core::TrainingRecord> rows) {
  flushPending();
  ++stepsRun_;
  if (step.noisy) noisy_.push_back(fmt::format("training {} {}", step.scope, step.op));
  if (trainingSteps_++ == 0 && !rows.empty()) {
    fmt::print(out_, "# per training step, {} steps timed; time = the slowest rank's; interference = concurrent / "
                     "isolated time\n",
               rows.front().iters);
    fmt::print(out_, "# {:>10} {:>7} {:>25} {:>14} {:>10} {:>5} {:>12} {:>9} {:>9} {:>12}\n", "mode", "traffic",
               "ops", "groups x ranks", "message", "msgs", "time (us)", "algbw", "busbw", "interference");
  }
  for (const auto& r : rows) {
    fmt::print(out_, "  {:>10} {:>7} {:>25} {:>14} {:>10} {:>5} {:>12.1f} {:>9.2f} {:>9.2f} {:>12}{}\n", r.mode,
               r.traffic, r.ops, fmt::format("{} x {}", r.groups, r.nranks), core::formatBytes(r.bytes), r.messages,
               r.timeUs.median, r.algbw, r.busbw,
               std::isnan(r.interference) ? std::string("-") : fmt::format("{:.2f}", r.interference),
               r.noisy ? "  noisy" : "");
  }
  std::fflush(out_);
}

void ConsoleSink::printMatrix(const char* title, const core::Matrix& m,
                              const std::vector<std::string>& labels, const char* format) {
  const auto label = [&](int i) {
    return static_cast<std::size_t>(i) < labels.size() ? labels[static_cast<std::size_t>(i)] : std::to_string(i);
  };
  fmt::print(out_, "# {}\n#{:>10}", title, "");
  for (int c = 0; c < m.n; ++c) fmt::print(out_, " {:>9.9}", label(c));
  fmt::print(out_, "\n");
  for (int r = 0; r < m.n; ++r) {
    std::string line = fmt::format("#{:>10.10}", label(r));
    for (int c = 0; c < m.n; ++c) {
      const float v = m.at(r, c);
      line += std::isnan(v) ? fmt::format(" {:>9}", "-") : fmt::format(fmt::runtime(format), v);
    }
    fmt::print(out_, "{}\n", line);
  }
}

void ConsoleSink::printCopies(const core::Matrices& m) {
  constexpr int kFits = 16;
  constexpr std::size_t kNodesShown = 4;  // the file holds every node
  for (std::size_t i = 0; i < m.copies.size() && i < kNodesShown; ++i) {
    const core::CopyMatrices& c = m.copies[i];
    if (c.n() < 2 || c.n() > kFits || c.methods.empty()) continue;
    const auto& name = static_cast<std::size_t>(c.node) < nodeNames_.size()
                           ? nodeNames_[static_cast<std::size_t>(c.node)] : std::to_string(c.node);
    std::vector<std::string> labels;
    for (int r = 0; r < c.n(); ++r) {
      const int gpu = c.gpus[static_cast<std::size_t>(r)];
      labels.push_back(gpu >= 0 ? fmt::format("GPU{}", gpu) : fmt::format("rank {}", c.ranks[static_cast<std::size_t>(r)]));
    }
    for (const auto& x : c.methods) {
      const std::string title = fmt::format("{}: {} copy write bandwidth, GB/s (row writes into column)", name,
                                            x.method == "ce" ? "copy-engine" : x.method == "sm" ? "SM-kernel" : "host");
      printMatrix(title.c_str(), x.writeUnidir, labels, " {:>9.2f}");
    }
    std::vector<std::string> staged;
    for (int a = 0; a < c.n(); ++a) {
      for (int b = a + 1; b < c.n(); ++b) {
        if (c.path[static_cast<std::size_t>(a * c.n() + b)] == "host_staged") {
          staged.push_back(fmt::format("{}-{}", labels[static_cast<std::size_t>(a)], labels[static_cast<std::size_t>(b)]));
        }
      }
    }
    if (!staged.empty()) {
      fmt::print(out_, "#   no peer access, copied through host memory: {}\n", fmt::join(staged, ", "));
    }
  }
  if (m.copies.size() > kNodesShown) {
    fmt::print(out_, "#   ... copy matrices of {} more nodes in /matrix/gpu\n", m.copies.size() - kNodesShown);
  }
}

void ConsoleSink::analysis(const core::Matrices& m, const std::vector<core::Finding>& findings) {
  flushPending();
  constexpr int kFits = 16;  // columns that fit a terminal
  fmt::print(out_, "#\n");
  printCopies(m);
  if (!m.pairsMeasured) {
    // only copies ran: nothing pairwise to show
  } else if (m.nodeBw.n >= 2 && m.nodeBw.n <= kFits) {
    printMatrix(m.nodeMeasured ? "node x node bandwidth, GB/s (row sends to column, all its ranks at once)"
                               : "node x node bandwidth, GB/s (row sends to column)",
                m.nodeBw, nodeNames_, " {:>9.3f}");
  } else if (m.rankUnidir.n >= 2 && m.rankUnidir.n <= kFits) {
    std::vector<std::string> labels;
    for (int r = 0; r < m.rankUnidir.n; ++r) labels.push_back(fmt::format("rank {}", r));
    printMatrix("rank x rank bandwidth, GB/s (row sends to column)", m.rankUnidir, labels, " {:>9.3f}");
  } else {
    fmt::print(out_, "# {} x {} rank matrix and {} x {} node matrix: too large for the console, "
                     "see /matrix in the results file\n",
               m.rankUnidir.n, m.rankUnidir.n, m.nodeBw.n, m.nodeBw.n);
  }
  std::vector<core::Finding> all = std::move(runFindings_);
  runFindings_.clear();
  all.insert(all.end(), findings.begin(), findings.end());
  printCulprits(all, true);
  std::fflush(out_);
}

// The findings by culprit (culprits.h): errors and warnings under Bottlenecks, then notes.
void ConsoleSink::printCulprits(const std::vector<core::Finding>& findings, bool pairsJudged) {
  const std::vector<Culprit> culprits = groupCulprits(findings, topology_);
  std::size_t serious = 0;
  std::size_t seriousRows = 0;
  for (const auto& c : culprits) {
    if (c.severity == core::Severity::kInfo) continue;
    ++serious;
    seriousRows += c.count();
  }
  if (serious == 0) {
    fmt::print(out_, "#\n# Bottlenecks: none found{}\n",
               pairsJudged ? " (every measured pair is within its threshold of the baseline of its link class)"
                           : " (no pairs measured: only what the run saw as it measured was judged)");
  } else {
    fmt::print(out_, "#\n# Bottlenecks ({}):\n",
               seriousRows == serious ? fmt::format("{}", serious)
                                      : fmt::format("{} culprit{} from {} findings", serious, serious == 1 ? "" : "s",
                                                    seriousRows));
  }
  for (const auto& c : culprits) printCulprit(out_, c);  // notes come last: they sort last
}

void ConsoleSink::finding(const core::Finding& finding) {
  runFindings_.push_back(finding);
  if (!noticed_.emplace(finding.kind, finding.subject).second) return;
  flushPending();
  std::string kind(core::name(finding.kind));
  std::replace(kind.begin(), kind.end(), '_', ' ');
  fmt::print(out_, "#\n# {} ({}): {}\n", upper(kind), finding.subject, finding.message);
  std::fflush(out_);
}

void ConsoleSink::recordedFindings(const std::vector<core::Finding>& findings) {
  runFindings_.insert(runFindings_.end(), findings.begin(), findings.end());
}

// How the backend's library reached the peers: each distinct way once, with the ranks that used it.
void ConsoleSink::inventoryEnd(const core::InventoryRows& end) {
  const auto ways = endpointWays(end.endpoints);
  if (ways.empty()) return;
  fmt::print(out_, "# endpoints (transports per peer, /inventory/endpoints):\n");
  for (const auto& [ranks, transports] : ways) fmt::print(out_, "#   ranks {}: {}\n", ranks, transports);
}

void ConsoleSink::finish(bool complete) {
  flushPending();
  // findings the analysis did not summarise: a run without pairs or copies, a hang at its end
  if (!runFindings_.empty()) printCulprits(std::exchange(runFindings_, {}), false);
  // One group: its peak and size; several: the median over groups (the peak) and their range.
  const auto peakText = [](const std::map<int, Peak>& groups, int width) {
    auto lo = groups.begin();
    auto hi = groups.begin();
    std::vector<double> perGroup;
    for (auto g = groups.begin(); g != groups.end(); ++g) {
      if (g->second.busbw < lo->second.busbw) lo = g;
      if (g->second.busbw > hi->second.busbw) hi = g;
      perGroup.push_back(g->second.busbw);
    }
    if (groups.size() == 1)
      return fmt::format("{:>{}.2f} at {}", hi->second.busbw, width, core::formatBytes(hi->second.bytes));
    return fmt::format("{:>{}.2f} median of {} groups ({:.2f} group {} .. {:.2f} group {})", core::median(perGroup),
                       width, groups.size(), lo->second.busbw, lo->first, hi->second.busbw, hi->first);
  };
  if (!peaks_.empty())
    fmt::print(out_, "#\n# Peak bus bandwidth per scope and op (GB/s, out-of-place: per group the largest busbw "
                     "over the sizes, from the mean time, wrong results left out; in-place beside it):\n");
  for (const auto& [key, groups] : peaks_) {
    const bool inPlaceKey = key.ends_with(kInPlacePeakKey);
    const std::string name = inPlaceKey ? key.substr(0, key.size() - std::strlen(kInPlacePeakKey)) : key;
    const std::string partnerKey = inPlaceKey ? name : key + kInPlacePeakKey;
    const auto partner =
        std::find_if(peaks_.begin(), peaks_.end(), [&partnerKey](const auto& p) { return p.first == partnerKey; });
    if (inPlaceKey && partner != peaks_.end()) continue;  // printed beside its out-of-place figure
    const std::map<int, Peak> none;
    const std::map<int, Peak>& outOfPlace = inPlaceKey ? none : groups;
    const std::map<int, Peak>& inPlace = inPlaceKey ? groups : partner != peaks_.end() ? partner->second : none;
    if (outOfPlace.empty() && inPlace.empty()) continue;
    fmt::print(out_, "#   {:<28} {}{}\n", name, outOfPlace.empty() ? fmt::format("{:>9}", "-") : peakText(outOfPlace, 9),
               inPlace.empty() ? "" : "; in-place " + peakText(inPlace, 0));
  }
  if (checked_ || wrong_ > 0) {
    fmt::print(out_, "# Out of bounds values : {} {}\n", wrong_, wrong_ == 0 ? "OK" : "FAILED");
  } else if (storageSteps_ == 0 || stepsRun_ > storageSteps_) {  // a run of only the storage feed checks nothing
    fmt::print(out_, "# Out of bounds values : N/A (results not checked: -c 0)\n");
  }
  if (!noisy_.empty()) {
    constexpr std::size_t kShown = 5;
    std::vector<std::string> shown(noisy_.begin(), noisy_.begin() + static_cast<long>(std::min(noisy_.size(), kShown)));
    fmt::print(out_, "# Noisy steps (iteration times varied beyond --noise-cv; see time_cv): {}: {}{}\n",
               noisy_.size(), fmt::join(shown, "; "), noisy_.size() > kShown ? "; ..." : "");
  }
  fmt::print(out_, "# Steps: {} run, {} waived{}{}{}\n", stepsRun_, stepsWaived_,
             copySteps_ > 0 ? fmt::format(", {} copy steps", copySteps_) : "",
             pairRounds_ + pairRetests_ > 0
                 ? fmt::format(", {} pairwise rounds, {} retest rounds", pairRounds_, pairRetests_)
                 : "",
             complete ? "" : " (incomplete run)");
  if (costs_) {
    fmt::print(out_, "# Rank 0: planning {:.2f} s, analysis {:.2f} s, writing {:.2f} s (real time); peak memory {}\n",
               costs_->planSeconds, costs_->analysisSeconds, costs_->writeSeconds, core::formatBytes(costs_->peakRssBytes));
  }
  std::fflush(out_);
}

namespace {

// Feeds the sink the file's steps in order, each with its rows, found through its kind's table in
// the schema.
void replaySteps(ConsoleSink& sink, const ResultsFile& file) {
  std::map<core::StepKind, std::function<void(const core::StepRecord&)>> feeds;
  core::forEachRowType([&]<class R>(std::type_identity<R>) {
    auto rows = std::make_shared<std::map<int, std::vector<R>>>();
    for (const R& r : rowsIn<R>(file)) (*rows)[r.step].push_back(r);
    feeds[rowTable<R>().stepKind] = [&sink, rows](const core::StepRecord& s) {
      const auto it = rows->find(s.step);
      sink.step(s, it != rows->end() ? std::span<const R>(it->second) : std::span<const R>());
    };
  });
  bool layoutShown = false;
  for (const auto& s : file.steps) {
    const bool training = s.kind == core::StepKind::kTraining;
    if (training && !layoutShown) sink.layout(file.layout, file.layoutPlaces);
    layoutShown = layoutShown || training;
    feeds.at(s.kind)(s);
  }
}

}  // namespace

void printResults(std::FILE* out, const ResultsFile& file) {
  ConsoleSink sink(out);
  // the acceptance verdict first, when the file was judged: it is what a reader looks for
  if (const auto& a = file.acceptance) {
    fmt::print(out, "# {}\n", acceptanceHeadline(*a));
    std::istringstream reasons(a->reasons);
    for (std::string line; std::getline(reasons, line);) fmt::print(out, "#   {}\n", line);
  }
  fmt::print(out, "# {}: schema v{}, created {}, {}\n", file.path, file.provenance.schemaVersion,
             file.provenance.createdUtc, file.complete ? "complete" : "INCOMPLETE");
  fmt::print(out, "# command: {}\n", file.provenance.commandLine);
  std::istringstream resumed(file.provenance.resumed);
  for (std::string line; std::getline(resumed, line);) fmt::print(out, "# resumed {}\n", line);
  if (!file.imported.empty()) {
    std::vector<std::string> logs;
    for (const auto& i : file.imported) {
      if (std::find(logs.begin(), logs.end(), i.file) == logs.end()) logs.push_back(i.file);
    }
    fmt::print(out, "# imported from {}: {}\n", file.imported.front().format, fmt::join(logs, ", "));
    for (const auto& i : file.imported) {
      // the log's own footer as the log gives it (the mean over every row, not a peak); its "0 OK"
      // counts nothing where no row was checked (-c 0)
      const bool checked = std::any_of(file.collectives.begin(), file.collectives.end(), [&](const auto& r) {
        return r.step >= i.firstStep && r.step <= i.lastStep && r.checked;
      });
      fmt::print(out, "#   {}: {}{}, {} rows, steps {}-{}; {}; out of bounds values: {}\n", i.file, i.op,
                 i.toolVersion.empty() ? "" : " (nccl-tests " + i.toolVersion + ")", i.rows, i.firstStep, i.lastStep,
                 i.avgBusBandwidthLine.empty() ? "no Avg bus bandwidth line" : i.avgBusBandwidthLine,
                 !checked ? "results not checked (-c 0)" : i.outOfBounds.empty() ? "not given" : i.outOfBounds);
    }
  }
  if (!file.recoveredFrom.empty()) {
    fmt::print(out, "# read from its journal {} (the run ended before closing the file)\n", file.recoveredFrom);
  }
  if (const auto& a = file.acceptance) {
    fmt::print(out, "# acceptance: {} against profile {} ({}): {} checks, {} failed, {} not measured{}; recorded {} by "
               "fabricmap {}\n",
               title(acceptanceOf(*a)), a->profile, a->profileSource, a->checks, a->failed, a->missing,
               a->allowMissing ? " (allowed)" : "", a->createdUtc, a->toolVersion);
  }
  sink.begin(file.provenance, file.topology, file.scopes);
  replaySteps(sink, file);
  if (file.hasMatrices) {
    sink.analysis(file.matrices, file.findings);
  } else {
    // without matrices the analysis did not run: the findings are those made during the run
    sink.recordedFindings(file.findings);
  }
  sink.finish(file.complete);
  if (!file.complete) {
    std::vector<bool> seen(static_cast<std::size_t>(std::max(file.provenance.plannedSteps, 0)), false);
    for (const auto& s : file.steps) {
      if (s.step >= 0 && s.step < file.provenance.plannedSteps) seen[static_cast<std::size_t>(s.step)] = true;
    }
    std::vector<int> missing;
    for (std::size_t i = 0; i < seen.size(); ++i) {
      if (!seen[i]) missing.push_back(static_cast<int>(i));
    }
    fmt::print(out, "# INCOMPLETE: {} of {} planned steps recorded{}\n", file.steps.size(),
               file.provenance.plannedSteps,
               missing.empty() ? "" : "; missing steps " + core::formatRanks(missing));
  }
}

}  // namespace fabricmap::results
