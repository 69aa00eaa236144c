// The HTML report (see report.h): verdict and findings, bandwidth heatmaps, busbw curves,
// topology, the inventory (report_inventory.cpp), training pattern and scaling tables, provenance. Each section is a function that
// appends to the page; SVG is written by hand (a few element kinds, no library needed).
#include "results/report.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/stats.h"
#include "core/units.h"
#include "results/busbw_peak.h"
#include "results/culprits.h"
#include "results/inventory_text.h"

namespace fabricmap::results {

std::string htmlEscape(std::string_view text) {
  constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default:
          if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
            out += kReplacement;
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    // A multi-byte sequence is copied only when it is valid UTF-8 (no overlong forms, no
    // surrogates, nothing above U+10FFFF); a browser would otherwise guess an encoding.
    const std::size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    bool valid = len > 0 && i + len <= text.size();
    std::uint32_t cp = len == 2 ? c & 0x1fU : len == 3 ? c & 0x0fU : c & 0x07U;
    for (std::size_t k = 1; valid && k < len; ++k) {
      const auto cc = static_cast<unsigned char>(text[i + k]);
      valid = (cc & 0xc0U) == 0x80U;
      cp = (cp << 6) | (cc & 0x3fU);
    }
    if (valid) {
      valid = (len == 2 && cp >= 0xa0) || (len == 3 && cp >= 0x800 && (cp < 0xd800 || cp > 0xdfff)) ||
              (len == 4 && cp >= 0x10000 && cp <= 0x10ffff);
    }
    if (valid) {
      out.append(text.substr(i, len));
      i += len;
    } else {
      out += kReplacement;  // C1 controls (U+0080..U+009F) land here too
      ++i;
    }
  }
  return out;
}

namespace {

using Out = std::back_insert_iterator<std::string>;

constexpr double kSlowShare = 0.9;  // the analysis's default --slow-threshold

// The run's --slow-threshold (its run configuration), the default where the file lacks it.
double slowShareOf(const ResultsFile& f) {
  const auto config = nlohmann::json::parse(f.provenance.runConfig, nullptr, false);
  if (config.is_object()) {
    const auto it = config.find("slow_threshold");
    if (it != config.end() && it->is_number()) {
      const double v = it->get<double>();
      if (v > 0 && v <= 1) return v;
    }
  }
  return kSlowShare;
}

std::string esc(std::string_view s) { return htmlEscape(s); }

bool finite(double v) { return std::isfinite(v); }

// GB/s with the precision a person reads: 3 significant digits, at least 2 decimals below 10.
std::string bwText(double v) {
  if (!finite(v)) return "-";
  if (v >= 100) return fmt::format("{:.0f}", v);
  if (v >= 10) return fmt::format("{:.1f}", v);
  if (v >= 0.01 || v == 0) return fmt::format("{:.2f}", v);
  return fmt::format("{:.2g}", v);
}

std::string usText(double us) {
  if (!finite(us)) return "-";
  return us < 1e4 ? fmt::format("{:.2f}", us) : fmt::format("{:.0f}", us);
}

// At most `chars` bytes of `text` (cut at a UTF-8 character boundary), "..." marking a cut: a
// label from the file must not run across its neighbours.
std::string shortened(std::string_view text, std::size_t chars) {
  if (text.size() <= chars) return std::string(text);
  std::size_t cut = chars - 1;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0U) == 0x80U) --cut;
  return std::string(text.substr(0, cut)) + "\u2026";
}

std::string plural(std::size_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string nodeName(const ResultsFile& f, int node) {
  for (const auto& n : f.topology.nodes) {
    if (n.node == node) return n.name;
  }
  return fmt::format("node{}", node);
}

constexpr std::string_view kStyle = R"(
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1f2937;background:#f8fafc}
header{background:#0f172a;color:#f8fafc;padding:14px 24px}
header h1{font-size:20px;margin:0 0 4px}
header p{margin:0;color:#cbd5e1}
nav{padding:6px 24px;background:#e2e8f0;font-size:13px}
nav a{margin-right:14px;color:#1e3a8a;text-decoration:none}
main{padding:8px 24px 40px}
section{margin:18px 0 26px}
h2{font-size:17px;border-bottom:2px solid #cbd5e1;padding-bottom:3px}
h3{font-size:15px;margin:14px 0 6px}
table{border-collapse:collapse;font-size:13px;margin:6px 0}
th,td{border:1px solid #cbd5e1;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#e2e8f0}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.verdict{font-size:18px;font-weight:600;padding:10px 14px;border-radius:6px;margin:8px 0}
.v-fail{background:#fee2e2;color:#991b1b;border:1px solid #f87171}
.v-warn{background:#fef3c7;color:#92400e;border:1px solid #fbbf24}
.v-ok{background:#dcfce7;color:#166534;border:1px solid #4ade80}
.v-none{background:#f1f5f9;color:#334155;border:1px solid #cbd5e1}
.sev-error{color:#b91c1c;font-weight:600}.sev-ok{color:#15803d;font-weight:600}.sev-warning{color:#b45309;font-weight:600}.sev-info{color:#475569}
.note{color:#475569;font-size:13px;margin:4px 0}
.charts{display:flex;flex-wrap:wrap;gap:12px}
.chart{background:#fff;border:1px solid #cbd5e1;border-radius:4px;padding:4px}
.chart p{margin:2px 6px;font-size:12px;color:#475569}
pre{background:#f1f5f9;padding:6px;white-space:pre-wrap;word-break:break-all;font-size:12px;margin:0}
svg text{font-family:system-ui,sans-serif}
.q0{fill:#440154}.q1{fill:#482878}.q2{fill:#3e4989}.q3{fill:#31688e}.q4{fill:#26828e}
.q5{fill:#1f9e89}.q6{fill:#35b779}.q7{fill:#6ece58}.q8{fill:#b5de2b}.q9{fill:#fde725}.qn{fill:#e5e7eb}
.sw{fill:none;stroke:#f97316;stroke-width:2.5}.sn{fill:none;stroke:#64748b;stroke-width:2;stroke-dasharray:3 2}.se{fill:none;stroke:#ef4444;stroke-width:3}
.blk{fill:none;stroke:#111827;stroke-width:1.5}
.k1{fill:none;stroke:#a855f7;stroke-width:1.5}.k2{fill:none;stroke:#14b8a6;stroke-width:1.5}
.k3{fill:none;stroke:#64748b;stroke-width:1.5}.k4{fill:none;stroke:#0ea5e9;stroke-width:1.5}
.ov{pointer-events:none}
.gl-nv{background:#dcfce7}.gl-pci{background:#dbeafe}.gl-sys{background:#f1f5f9}
)";

// Link-class outline colours (the .k<class> CSS rules); inter-node cells have none.
constexpr std::array<std::string_view, core::kLinkClasses> kClassColour{"", "#a855f7", "#14b8a6", "#64748b", "#0ea5e9",
                                                                       ""};

// ---- verdict and findings ----------------------------------------------------------------------

// One finding's figures in the cells of a table row: measured, expected, ratio.
std::string figureCells(const core::Finding& x) {
  const std::string unit = esc(x.unit);
  return fmt::format("<td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>",
                     finite(x.measured) ? fmt::format("{:.4g} {}", x.measured, unit) : "-",
                     finite(x.expected) && x.expected != 0 ? fmt::format("{:.4g} {}", x.expected, unit) : "-",
                     finite(x.ratio) && x.ratio != 0 ? fmt::format("{:.2f}x", x.ratio) : "-");
}

// A culprit's evidence: its one message, or its findings folded in a <details> (worst first,
// each with its figures and confidence), so 36 rows on one rank read as one line.
void renderEvidence(Out out, const Culprit& c) {
  constexpr std::size_t kShown = 100;  // per culprit; `show --json` has every row
  if (c.count() == 1) {
    fmt::format_to(out, "{}", esc(c.worst().message));
    return;
  }
  fmt::format_to(out, "<details><summary>{} findings; worst: {}</summary><table><tr><th>measured</th><th>expected</th>"
                      "<th>ratio</th><th>confidence</th><th>message</th></tr>\n",
                 c.count(), esc(c.worst().message));
  for (std::size_t i = 0; i < c.count() && i < kShown; ++i) {
    const core::Finding& x = c.evidence[i];
    fmt::format_to(out, "<tr>{}<td class=\"n\">{}</td><td>{}</td></tr>\n", figureCells(x),
                   finite(x.confidence) ? fmt::format("{:.2f}", x.confidence) : "-", esc(x.message));
  }
  fmt::format_to(out, "</table>{}</details>", c.count() > kShown
                                                  ? fmt::format("<p class=\"note\">{} more not shown.</p>", c.count() - kShown)
                                                  : "");
}

// The acceptance verdict (verify --record, run --accept) as the page's headline, in its colour: a
// planner reads the first box as the answer, so it is the answer when there is one.
void renderAcceptance(Out out, const VerdictRecord& a) {
  const Acceptance outcome = acceptanceOf(a);
  const char* cls = outcome == Acceptance::kPass ? "v-ok" : outcome == Acceptance::kFail ? "v-fail" : "v-warn";
  fmt::format_to(out, "<div class=\"verdict {}\">{}</div>\n<p class=\"note\">Judged by fabricmap {} on {} against "
                      "profile {} ({}){}.</p>\n",
                 cls, esc(acceptanceHeadline(a)),
                 esc(a.toolVersion), esc(a.createdUtc), esc(a.profile), esc(a.profileSource),
                 a.allowMissing ? "; missing checks allowed (--allow-missing)" : "");
  if (!a.reasons.empty()) fmt::format_to(out, "<pre>{}</pre>\n", esc(a.reasons));
}

// What the findings say, counted by culprit. Green only when something was judged: a file without
// pairwise matrices had no pair, node or link judged, and "0 errors" would claim what was not.
void renderFindingsSummary(Out out, const ResultsFile& f, const std::vector<Culprit>& culprits) {
  std::size_t errors = 0;
  std::size_t warnings = 0;
  std::size_t notes = 0;
  for (const auto& c : culprits) {
    errors += c.severity == core::Severity::kError;
    warnings += c.severity == core::Severity::kWarning;
    notes += c.severity == core::Severity::kInfo;
  }
  const bool judged = f.hasMatrices && f.matrices.pairsMeasured;
  const char* cls = errors > 0 ? "v-fail" : warnings > 0 ? "v-warn" : judged ? "v-ok" : "v-none";
  const std::string counts =
      fmt::format("{}, {}{}{}{}", plural(errors, "error", "errors"), plural(warnings, "warning", "warnings"),
                  notes > 0 ? ", " + plural(notes, "note", "notes") : "",
                  f.findings.size() > culprits.size() ? fmt::format(" (from {} findings)", f.findings.size()) : "",
                  judged || errors + warnings > 0 ? "" : ": no pairs measured, so no pair, node or link was judged");
  if (f.acceptance) {
    fmt::format_to(out, "<p class=\"{}\">Findings: {}</p>\n", errors > 0 ? "sev-error" : warnings > 0 ? "sev-warning" : "note",
                   counts);
  } else {
    fmt::format_to(out, "<div class=\"verdict {}\">{}</div>\n", cls, counts);
  }
}

void renderVerdict(Out out, const ResultsFile& f) {
  const std::vector<Culprit> culprits = groupCulprits(f.findings, f.topology);
  fmt::format_to(out, "<section id=\"verdict\"><h2>Verdict</h2>\n");
  if (f.acceptance) renderAcceptance(out, *f.acceptance);
  renderFindingsSummary(out, f, culprits);
  if (!f.complete) {
    fmt::format_to(out, "<p class=\"sev-error\">INCOMPLETE run: {} of {} planned steps recorded{}.</p>\n",
                   f.steps.size(), f.provenance.plannedSteps,
                   f.recoveredFrom.empty() ? "" : " (read from its journal " + esc(f.recoveredFrom) + ")");
  }
  if (!f.hasMatrices) {
    fmt::format_to(out, "<p class=\"note\">No pairwise or copy matrices in this file: the findings are those made "
                        "during the run (data corruption, layout, scaling, hangs).</p>\n");
  }
  if (f.findings.empty()) {
    fmt::format_to(out, "<p>{}</p></section>\n",
                   f.hasMatrices && f.matrices.pairsMeasured
                       ? "No findings: every measured pair is within its threshold of the baseline of its link class."
                       : "No findings; nothing here was judged pair by pair (no pairwise matrix).");
    return;
  }
  fmt::format_to(out, "<p class=\"note\">One row per culprit: the findings that name the same thing (a rank's "
                      "corrupted data in every group it joins counts once), its worst figure, the highest confidence "
                      "of its findings (0..1) and its evidence.</p>\n<table><tr><th>severity</th><th>kind</th>"
                      "<th>subject</th><th>findings</th><th>worst measured</th><th>expected</th><th>ratio</th>"
                      "<th>confidence</th><th>evidence</th></tr>\n");
  constexpr std::size_t kShown = 300;  // a broken 512-node fabric can name thousands of links
  for (std::size_t i = 0; i < culprits.size() && i < kShown; ++i) {
    const Culprit& c = culprits[i];
    const std::string_view level = core::name(c.severity);
    fmt::format_to(out, "<tr><td class=\"sev-{}\">{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td>{}"
                        "<td class=\"n\">{}</td><td>",
                   level, level, core::name(c.kind), esc(c.subject), c.count(), figureCells(c.worst()),
                   finite(c.confidence) ? fmt::format("{:.2f}", c.confidence) : "-");
    renderEvidence(out, c);
    fmt::format_to(out, "</td></tr>\n");
  }
  fmt::format_to(out, "</table>\n");
  if (culprits.size() > kShown) {
    fmt::format_to(out, "<p class=\"note\">{} more culprits not shown: <code>fabricmap show --json</code> lists "
                        "every finding.</p>\n", culprits.size() - kShown);
  }
  fmt::format_to(out, "</section>\n");
}

// ---- heatmaps ----------------------------------------------------------------------------------

// A square heatmap ready to draw: after binning, one entry per drawn cell.
struct Heatmap {
  std::string id;  // unique on the page (the cells' style rule names it)
  std::string title;
  std::string caption;  // how to read it (HTML)
  int n = 0;
  std::vector<std::string> labels;  // axis labels (plain text)
  std::vector<double> value;        // drawn value, NaN: empty cell
  std::vector<std::string> tip;     // hover text (plain text)
  std::vector<int> mark;            // 0 fine, 1 below 0.9 x expected (or named by a finding), 2 below 0.5 x
  std::vector<int> linkClass;       // outline class index, 0: none
  std::vector<std::pair<int, int>> blocks;  // [first, last] rows outlined as a block (nodes)
  std::string unit = "GB/s";
  std::string legend;  // extra legend items (HTML)
  bool judged = true;  // cells compared with a baseline: the slow and noisy outlines mean something
  bool latency = false;  // values are latencies (us): lower is better, so the colour scale runs the other way
};

std::size_t cellIndex(int n, int r, int c) { return static_cast<std::size_t>(r) * static_cast<std::size_t>(n) + static_cast<std::size_t>(c); }

// n x n cells, every one empty until a builder fills it.
Heatmap emptyHeatmap(int n) {
  Heatmap h;
  h.n = n;
  const std::size_t cells = cellIndex(n, n, 0);
  h.value.assign(cells, std::numeric_limits<double>::quiet_NaN());
  h.tip.assign(cells, "");
  h.mark.assign(cells, 0);
  h.linkClass.assign(cells, 0);
  return h;
}

// The rows [first, last] of block b when n rows are binned `bin` at a time.
std::pair<int, int> blockRows(int n, int bin, int b) { return {b * bin, std::min(n, (b + 1) * bin) - 1}; }

// What the heatmap builders need to know about one matrix.
struct MatrixSource {
  const core::Matrix* bw = nullptr;
  const core::Matrix* worst = nullptr;    // n = 0: none
  const core::Matrix* latency = nullptr;  // n = 0: none
  const core::LinkClasses* linkClass = nullptr;  // of each cell; none for a node matrix
  std::vector<double> expectedByClass;    // by LinkClass (or [0] for a node matrix)
  std::vector<double> barByClass;         // slow below this share of the expected bandwidth
  double slowShare = kSlowShare;          // the run's threshold before noise lowers it
  std::vector<std::pair<int, int>> named;  // cells named by findings
  std::vector<std::string> names;         // full name of each row ("rank 3 (node1)")
  std::vector<std::string> axis;          // short axis label of each row
  std::vector<int> group;                 // node of each row (blocks outlined), empty: none
  std::string noun;                       // "node" or "rank"
};

std::size_t classOf(const MatrixSource& s, int r, int c) {
  return s.linkClass == nullptr ? 0 : static_cast<std::size_t>(s.linkClass->at(r, c));
}

double expectedOf(const MatrixSource& s, int r, int c) {
  const std::size_t k = classOf(s, r, c);
  return k < s.expectedByClass.size() ? s.expectedByClass[k] : std::numeric_limits<double>::quiet_NaN();
}

// Cell marks: 0 fine, 1 slow, 2 slow and below half the baseline, 3 noisy.
constexpr int kNoisy = 3;

// The analysis's rules (orchestrator/analysis/judging.h): a pair whose samples are all below the bar of
// its class is slow (an error below half the baseline as well), however much they differ; one
// with samples on both sides of the bar is noisy and not judged.
int markOf(const MatrixSource& s, int r, int c, double v) {
  const double worst = s.worst != nullptr && s.worst->n == s.bw->n ? s.worst->at(r, c) : v;
  const double expected = expectedOf(s, r, c);
  const std::size_t k = classOf(s, r, c);
  const double bar = (k < s.barByClass.size() ? s.barByClass[k] : s.slowShare) * expected;
  if (!finite(v) || !finite(expected) || expected <= 0) return 0;
  if (v >= bar) return finite(worst) && worst < bar ? kNoisy : 0;
  return v < 0.5 * expected ? 2 : 1;
}

Heatmap fullHeatmap(const MatrixSource& s) {
  const int n = s.bw->n;
  Heatmap h = emptyHeatmap(n);
  h.labels = s.axis;
  std::set<std::pair<int, int>> named(s.named.begin(), s.named.end());
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c < n; ++c) {
      const std::size_t i = cellIndex(n, r, c);
      const double v = s.bw->at(r, c);
      if (!finite(v)) continue;
      h.value[i] = v;
      const double expected = expectedOf(s, r, c);
      const int mark = markOf(s, r, c, v);
      h.mark[i] = mark == kNoisy ? mark : std::max(mark, named.count({r, c}) > 0 ? 1 : 0);
      const int k = static_cast<int>(classOf(s, r, c));
      if (k > 0 && static_cast<std::size_t>(k) < kClassColour.size() && !kClassColour[static_cast<std::size_t>(k)].empty()) {
        h.linkClass[i] = k;
      }
      std::string tip = fmt::format("{} \u2192 {}: {} GB/s", s.names[static_cast<std::size_t>(r)],
                                    s.names[static_cast<std::size_t>(c)], bwText(v));
      const double worst = s.worst != nullptr && s.worst->n == n ? s.worst->at(r, c) : v;
      if (finite(worst) && worst != v) tip += fmt::format(" (worst sample {})", bwText(worst));
      if (s.latency != nullptr && s.latency->n == n && finite(s.latency->at(r, c))) {
        tip += fmt::format(", latency {} us", usText(s.latency->at(r, c)));
      }
      if (s.linkClass != nullptr && k >= 0 && static_cast<std::size_t>(k) < core::kLinkClasses) {
        tip += fmt::format(", {}", core::name(static_cast<core::LinkClass>(k)));
      }
      if (finite(expected) && expected > 0) {
        tip += fmt::format(", expected {} GB/s ({:.2f}x)", bwText(expected), v / expected);
      }
      if (h.mark[i] == kNoisy) {
        tip += " - noisy: samples on both sides of the bar, not judged";
      } else if (h.mark[i] > 0) {
        tip += h.mark[i] == 2 ? " - SLOW (below 0.5x)" : " - slow";
      }
      h.tip[i] = std::move(tip);
    }
  }
  if (!s.group.empty()) {
    int first = 0;
    for (int r = 1; r <= n; ++r) {
      if (r == n || s.group[static_cast<std::size_t>(r)] != s.group[static_cast<std::size_t>(first)]) {
        if (r - first > 1) h.blocks.emplace_back(first, r - 1);
        first = r;
      }
    }
  }
  return h;
}

// Blocks of `bin` rows and columns; each drawn cell is the block's minimum (the slow pair is what
// one looks for), its hover text the block's min / median / max and how many pairs are slow.
Heatmap binnedHeatmap(const MatrixSource& s, int bin) {
  const int n = s.bw->n;
  const int nb = (n + bin - 1) / bin;
  Heatmap h = emptyHeatmap(nb);
  const auto range = [&](int b) {
    const auto [first, last] = blockRows(n, bin, b);
    return first == last ? fmt::format("{}", first) : fmt::format("{}-{}", first, last);
  };
  for (int b = 0; b < nb; ++b) h.labels.push_back(range(b));
  std::set<std::pair<int, int>> named(s.named.begin(), s.named.end());
  std::vector<double> values;
  for (int br = 0; br < nb; ++br) {
    for (int bc = 0; bc < nb; ++bc) {
      values.clear();
      int slow = 0;
      int mark = 0;
      int noisy = 0;
      for (int r = br * bin; r < std::min(n, (br + 1) * bin); ++r) {
        // only the cells measured: a quick-mode matrix of 16,384 ranks has a few per row
        s.bw->forEachInRow(r, bc * bin, std::min(n, (bc + 1) * bin), [&](int c, float cell) {
          const double v = cell;
          values.push_back(v);
          const int base = markOf(s, r, c, v);
          if (base == kNoisy) {
            ++noisy;
            return;
          }
          const int m = std::max(base, !named.empty() && named.count({r, c}) > 0 ? 1 : 0);
          slow += m > 0;
          mark = std::max(mark, m);
        });
      }
      if (values.empty()) continue;
      const std::size_t i = cellIndex(nb, br, bc);
      const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
      h.value[i] = *lo;
      h.mark[i] = mark == 0 && noisy > 0 ? kNoisy : mark;
      h.tip[i] = fmt::format("{}s {} \u2192 {}: min {}, median {}, max {} GB/s, {} pairs{}{}", s.noun, range(br),
                             range(bc), bwText(*lo), bwText(core::median(values)), bwText(*hi), values.size(),
                             slow > 0 ? fmt::format("; {} slow", slow) : "",
                             noisy > 0 ? fmt::format("; {} noisy", noisy) : "");
    }
  }
  return h;
}

Heatmap heatmapOf(const MatrixSource& s, int maxCells) {
  if (s.bw->n <= kReportMaxCells) return fullHeatmap(s);
  return binnedHeatmap(s, (s.bw->n + maxCells - 1) / maxCells);
}

// Where a heatmap's parts go: cells of `cell` pixels after a `margin` for the labels, the legend
// below; `top` is the largest value (the colour scale's end).
struct HeatmapGeometry {
  explicit HeatmapGeometry(const Heatmap& h)
      : n(h.n), cell(std::clamp(720 / std::max(n, 1), 10, 48)), labelFont(cell >= 14 ? 11 : 9) {
    std::size_t labelChars = 0;
    for (const auto& l : h.labels) labelChars = std::max(labelChars, l.size());
    margin = std::clamp(static_cast<int>(std::min<std::size_t>(labelChars, 18)) * labelFont * 6 / 10 + 10, 28, 130);
    const int side = n * cell;
    width = std::max(margin + side + 12 + margin / 2, margin + 360);
    legendTop = margin + side + 14;
    height = legendTop + 40;
    for (const double v : h.value) {
      if (finite(v)) top = std::max(top, v);
    }
  }
  int n;
  int cell;
  int labelFont;
  int margin = 0;
  int width = 0;
  int legendTop = 0;
  int height = 0;
  double top = 0;
};

std::string heatmapValueText(const Heatmap& h, double v) { return h.latency ? usText(v) : bwText(v); }

// axis labels: rows left, columns rotated above
void renderHeatmapLabels(Out out, const Heatmap& h, const HeatmapGeometry& g) {
  const auto label = [&](int i) {
    return esc(shortened(h.labels[static_cast<std::size_t>(i)], 18));
  };
  const int every = std::max(1, (g.labelFont * 13 / 10 + g.cell - 1) / g.cell);
  fmt::format_to(out, "<g font-size=\"{}\" fill=\"#334155\">", g.labelFont);
  for (int i = 0; i < g.n; i += every) {
    const int mid = g.margin + i * g.cell + g.cell / 2;
    fmt::format_to(out, "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" dominant-baseline=\"middle\">{}</text>",
                   g.margin - 4, mid, label(i));
    fmt::format_to(out, "<text transform=\"translate({},{}) rotate(-60)\" dominant-baseline=\"middle\">{}</text>", mid,
                   g.margin - 4, label(i));
  }
  fmt::format_to(out, "</g>\n");
}

// The cells: a 64 x 64 grid is 4,096 of them, so each is as short as it can be: its size comes
// from a style rule, its row from the enclosing group. Darker is worse in every map: low
// bandwidth, high latency.
void renderHeatmapCells(Out out, const Heatmap& h, const HeatmapGeometry& g) {
  const bool numbers = g.cell >= 40;
  const auto bucket = [&](double v) {
    if (!finite(v)) return std::string("qn");
    const int q = g.top > 0 ? std::clamp(static_cast<int>(v / g.top * 10), 0, 9) : 0;
    return fmt::format("q{}", h.latency ? 9 - q : q);
  };
  fmt::format_to(out, "<style>#{0} rect{{width:{1}px;height:{1}px}}</style><g id=\"{0}\">\n", h.id, g.cell - 1);
  for (int r = 0; r < g.n; ++r) {
    fmt::format_to(out, "<g transform=\"translate(0,{})\">", g.margin + r * g.cell);
    for (int c = 0; c < g.n; ++c) {
      const std::size_t i = cellIndex(g.n, r, c);
      const int x = g.margin + c * g.cell;
      if (!finite(h.value[i])) {
        fmt::format_to(out, "<rect x=\"{}\" class=\"qn\"/>", x);
        continue;
      }
      fmt::format_to(out, "<rect x=\"{}\" class=\"{}\"><title>{}</title></rect>", x, bucket(h.value[i]), esc(h.tip[i]));
      if (numbers) {
        const bool low = g.top > 0 && h.value[i] / g.top < 0.6;
        const bool dark = h.latency ? !low : low;
        fmt::format_to(out, "<text class=\"ov\" x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\" "
                            "dominant-baseline=\"middle\" fill=\"{}\">{}</text>",
                       x + g.cell / 2, g.cell / 2, dark ? "#fff" : "#111", heatmapValueText(h, h.value[i]));
      }
    }
    fmt::format_to(out, "</g>\n");
  }
  fmt::format_to(out, "</g>\n");
}

// outlines on top of the cells, transparent to the pointer so the hover text stays reachable
void renderHeatmapOutlines(Out out, const Heatmap& h, const HeatmapGeometry& g) {
  const int n = g.n;
  const int cell = g.cell;
  const int margin = g.margin;
  fmt::format_to(out, "<g class=\"ov\">");
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c < n; ++c) {
      const int k = h.linkClass[cellIndex(n, r, c)];
      if (k > 0) {
        fmt::format_to(out, "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"k{}\"/>", margin + c * cell + 1,
                       margin + r * cell + 1, cell - 3, cell - 3, k);
      }
    }
  }
  for (const auto& [first, last] : h.blocks) {
    fmt::format_to(out, "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"blk\"/>", margin + first * cell - 1,
                   margin + first * cell - 1, (last - first + 1) * cell + 1, (last - first + 1) * cell + 1);
  }
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c < n; ++c) {
      const int m = h.mark[cellIndex(n, r, c)];
      if (m > 0) {
        fmt::format_to(out, "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"{}\"/>", margin + c * cell + 1,
                       margin + r * cell + 1, cell - 3, cell - 3, m == kNoisy ? "sn" : m == 2 ? "se" : "sw");
      }
    }
  }
  fmt::format_to(out, "</g>\n");
}

// legend: the colour scale, then the outlines
void renderHeatmapLegend(Out out, const Heatmap& h, const HeatmapGeometry& g) {
  const int margin = g.margin;
  const int legendTop = g.legendTop;
  fmt::format_to(out, "<g font-size=\"11\" fill=\"#334155\">");
  for (int q = 0; q < 10; ++q) {
    fmt::format_to(out, "<rect x=\"{}\" y=\"{}\" width=\"16\" height=\"12\" class=\"q{}\"/>", margin + q * 16, legendTop, q);
  }
  const std::string zero = "0";
  const std::string most = fmt::format("{} {}", heatmapValueText(h, g.top), esc(h.unit));
  fmt::format_to(out, "<text x=\"{}\" y=\"{}\">{}</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", margin,
                 legendTop + 26, h.latency ? most : zero, margin + 160, legendTop + 26, h.latency ? zero : most);
  if (h.judged) {
    fmt::format_to(out, "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" class=\"sw\"/><text x=\"{}\" y=\"{}\">slow</text>",
                   margin + 176, legendTop, margin + 194, legendTop + 10);
    fmt::format_to(out, "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" class=\"se\"/><text x=\"{}\" y=\"{}\">slow, &lt; 0.5x expected</text>",
                   margin + 176, legendTop + 20, margin + 194, legendTop + 30);
    fmt::format_to(out, "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" class=\"sn\"/><text x=\"{}\" y=\"{}\">noisy, not judged</text>",
                   margin + 236, legendTop, margin + 254, legendTop + 10);
  }
  fmt::format_to(out, "</g></svg>\n");
}

void renderHeatmap(Out out, const Heatmap& h) {
  const HeatmapGeometry g(h);
  fmt::format_to(out, "<h3>{}</h3>\n<p class=\"note\">{}</p>\n", esc(h.title), h.caption);
  fmt::format_to(out, "<svg width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\">\n", g.width, g.height,
                 g.width, g.height);
  renderHeatmapLabels(out, h, g);
  renderHeatmapCells(out, h, g);
  renderHeatmapOutlines(out, h, g);
  renderHeatmapLegend(out, h, g);
  if (!h.legend.empty()) fmt::format_to(out, "<p class=\"note\">{}</p>\n", h.legend);
}

// The share of the baseline below which the analysis calls a pair slow (core::Expected::bandwidthBar).
double slowBar(const core::Expected& e, double share) { return e.bandwidthBar(share); }

std::vector<double> classBars(const core::Matrices& m, double share) {
  std::vector<double> out;
  for (const auto& e : m.classExpected) out.push_back(slowBar(e, share));
  return out;
}

// The expected bandwidth of each link class: the analysis's baseline where the file has it, else
// the median of the class's measured cells.
std::vector<double> classBaselines(const core::Matrices& m) {
  std::vector<double> out(core::kLinkClasses, std::numeric_limits<double>::quiet_NaN());
  bool missing = false;  // cells are gathered only for classes without a baseline (a dense 8,192-rank
                         // matrix would take 512 MiB as doubles)
  for (std::size_t k = 1; k < core::kLinkClasses; ++k) {
    const double fixed = m.classExpected[k].bandwidth;
    if (finite(fixed) && fixed > 0) out[k] = fixed;
    missing = missing || !finite(out[k]);
  }
  std::vector<std::vector<double>> cells(core::kLinkClasses);
  const core::Matrix& bw = m.rankUnidir;
  if (missing && m.rankLinkClass.n == bw.n) {
    bw.forEachCell([&](int r, int c, float v) {
      const auto k = static_cast<std::size_t>(m.rankLinkClass.at(r, c));
      if (k < core::kLinkClasses && !finite(out[k])) cells[k].push_back(v);
    });
  }
  for (std::size_t k = 1; k < core::kLinkClasses; ++k) {
    if (!finite(out[k])) out[k] = core::median(cells[k]);
  }
  return out;
}

std::string classLegend(const core::Matrices& m, const std::vector<double>& baselines, const std::vector<int>& present,
                        double share) {
  std::string legend = "Link classes (expected bandwidth): ";
  bool first = true;
  for (std::size_t k = 1; k < core::kLinkClasses; ++k) {
    if (std::find(present.begin(), present.end(), static_cast<int>(k)) == present.end()) continue;
    legend += first ? "" : "; ";
    first = false;
    const auto colour = kClassColour[k];
    legend += colour.empty() ? "" : fmt::format("<span style=\"color:{}\">&#9632;</span> ", colour);
    legend += fmt::format("{} {} GB/s{}", core::name(static_cast<core::LinkClass>(k)), bwText(baselines[k]),
                          m.classExpectedFrom[k].empty() ? "" : " (" + esc(m.classExpectedFrom[k]) + " spec)");
    const double bar = slowBar(m.classExpected[k], share);
    if (bar < share) legend += fmt::format(", slow below {:.2f}x (noisy class)", bar);
  }
  return legend;
}

// Node x node latency (one rank per node, 8 B ping-pong): cells the analysis's node_latency and
// link_latency findings name are outlined by their severity. Above kReportMaxCells / 2 nodes it is
// binned, each cell the block's highest latency (the slow pair is what one looks for).
Heatmap nodeLatencyHeatmap(const ResultsFile& f, const std::vector<std::string>& names) {
  const core::Matrix& lat = f.matrices.nodeLatency;
  const core::Matrix& worst = f.matrices.nodeLatencyWorst;
  const int n = lat.n;
  std::vector<int> named(cellIndex(n, n, 0), 0);
  const auto name = [&](int a, int b, core::Severity severity) {
    const int m = severity == core::Severity::kError ? 2 : severity == core::Severity::kWarning ? 1 : 0;
    if (a < 0 || b < 0 || a >= n || b >= n) return;
    named[cellIndex(n, a, b)] = std::max(named[cellIndex(n, a, b)], m);
    named[cellIndex(n, b, a)] = std::max(named[cellIndex(n, b, a)], m);
  };
  for (const auto& x : f.findings) {
    if (x.kind == core::FindingKind::kLinkLatency) name(x.nodeA, x.nodeB, x.severity);
    if (x.kind == core::FindingKind::kNodeLatency) {
      for (int y = 0; y < n; ++y) {
        if (y != x.nodeA) name(x.nodeA, y, x.severity);
      }
    }
  }
  const double expected = f.matrices.nodeExpected.latency;
  const int bin = n <= kReportMaxCells / 2 ? 1 : (n + kReportMaxCells / 2 - 1) / (kReportMaxCells / 2);
  const int nb = (n + bin - 1) / bin;
  const auto range = [&](int b) {
    const auto [first, last] = blockRows(n, bin, b);
    return first == last ? names[static_cast<std::size_t>(first)] : fmt::format("{}-{}", first, last);
  };
  Heatmap h = emptyHeatmap(nb);
  h.id = "hm-node-latency";
  h.latency = true;
  h.judged = false;
  h.unit = "us";
  for (int b = 0; b < nb; ++b) h.labels.push_back(range(b));
  std::vector<double> values;
  for (int br = 0; br < nb; ++br) {
    for (int bc = 0; bc < nb; ++bc) {
      values.clear();
      int mark = 0;
      int markedPairs = 0;
      double worstSample = std::numeric_limits<double>::quiet_NaN();
      for (int r = br * bin; r < std::min(n, (br + 1) * bin); ++r) {
        for (int c = bc * bin; c < std::min(n, (bc + 1) * bin); ++c) {
          const double v = lat.at(r, c);
          if (!finite(v)) continue;
          values.push_back(v);
          mark = std::max(mark, named[cellIndex(n, r, c)]);
          markedPairs += named[cellIndex(n, r, c)] > 0;
          if (worst.n == n) worstSample = worst.at(r, c);
        }
      }
      if (values.empty()) continue;
      const std::size_t i = cellIndex(nb, br, bc);
      const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
      h.value[i] = *hi;
      h.mark[i] = mark;
      if (bin == 1) {
        h.tip[i] = fmt::format("{} \u2192 {}: {} us", range(br), range(bc), usText(*hi));
        if (finite(worstSample) && worstSample != *hi) h.tip[i] += fmt::format(" (worst sample {})", usText(worstSample));
        if (finite(expected) && expected > 0) {
          h.tip[i] += fmt::format(", baseline {} us ({:.2f}x)", usText(expected), *hi / expected);
        }
        if (mark > 0) h.tip[i] += mark == 2 ? " - HIGH (an error finding)" : " - high (a finding names it)";
      } else {
        h.tip[i] = fmt::format("nodes {} \u2192 {}: min {}, median {}, max {} us, {} pairs{}", range(br), range(bc),
                               usText(*lo), usText(core::median(values)), usText(*hi), values.size(),
                               markedPairs > 0 ? fmt::format("; {} named by findings", markedPairs) : "");
      }
    }
  }
  h.title = fmt::format("Node x node latency, us ({} nodes)", n);
  h.caption = fmt::format("One rank per node, small-message ping-pong (half the round trip). Darker is slower{}; "
                          "outlined orange or red where a latency finding names the pair or the node.",
                          finite(expected) && expected > 0 ? fmt::format("; baseline {} us", usText(expected)) : "");
  if (bin > 1) {
    h.caption += fmt::format(" Binned: {} nodes per row and column, each cell the highest latency of its block.", bin);
  }
  return h;
}

// The node x node bandwidth heatmap.
void renderNodeHeatmap(Out out, const ResultsFile& f, const std::vector<std::string>& nodeNames) {
  const core::Matrices& m = f.matrices;
  MatrixSource s;
  s.bw = &m.nodeBw;
  s.worst = &m.nodeBwWorst;
  s.latency = &m.nodeLatency;
  const double fixed = m.nodeExpected.bandwidth;
  std::vector<double> offDiagonal;
  m.nodeBw.forEachCell([&](int, int, float v) { offDiagonal.push_back(v); });
  s.expectedByClass = {finite(fixed) && fixed > 0 ? fixed : core::median(offDiagonal)};
  s.slowShare = slowShareOf(f);
  s.barByClass = {slowBar(m.nodeExpected, s.slowShare)};
  for (const auto& x : f.findings) {
    if (x.nodeA >= 0 && x.nodeB >= 0 && x.nodeA < m.nodeBw.n && x.nodeB < m.nodeBw.n && x.severity != core::Severity::kInfo) {
      s.named.emplace_back(x.nodeA, x.nodeB);
      s.named.emplace_back(x.nodeB, x.nodeA);
    }
  }
  s.names = nodeNames;
  s.axis = nodeNames;
  s.noun = "node";
  Heatmap h = heatmapOf(s, kReportMaxCells);
  h.id = "hm-node";
  h.title = fmt::format("Node x node bandwidth, GB/s ({} nodes)", m.nodeBw.n);
  h.caption = fmt::format("{}Expected {} GB/s between nodes{}.",
                          m.nodeMeasured ? "All ranks of the row node send to the column node's ranks at once. "
                                         : "The median of the node pair's rank pairs (one rank per node). ",
                          bwText(s.expectedByClass[0]),
                          s.barByClass[0] < s.slowShare
                              ? fmt::format(", slow below {:.2f}x of it (a noisy fabric)", s.barByClass[0])
                              : "");
  if (m.nodeBw.n > kReportMaxCells) {
    h.caption += fmt::format(" Binned: {} nodes per row and column, each cell the minimum of its block.",
                             (m.nodeBw.n + kReportMaxCells - 1) / kReportMaxCells);
  }
  renderHeatmap(out, h);
}

// The rank x rank bandwidth heatmap, black squares around each node's ranks.
void renderRankHeatmap(Out out, const ResultsFile& f) {
  const core::Matrices& m = f.matrices;
  MatrixSource s;
  s.bw = &m.rankUnidir;
  s.worst = &m.rankUnidirWorst;
  s.latency = &m.rankLatency;
  const int n = m.rankUnidir.n;
  if (m.rankLinkClass.n == n) s.linkClass = &m.rankLinkClass;
  s.expectedByClass = classBaselines(m);
  s.slowShare = slowShareOf(f);
  s.barByClass = classBars(m, s.slowShare);
  std::vector<int> nodeOf(static_cast<std::size_t>(n), -1);
  for (const auto& r : f.topology.ranks) {
    if (r.rank >= 0 && r.rank < n) nodeOf[static_cast<std::size_t>(r.rank)] = r.node;
  }
  for (int r = 0; r < n; ++r) {
    const int node = nodeOf[static_cast<std::size_t>(r)];
    s.names.push_back(node >= 0 ? fmt::format("rank {} ({})", r, nodeName(f, node)) : fmt::format("rank {}", r));
    s.axis.push_back(fmt::format("{}", r));
  }
  s.group = nodeOf;
  s.noun = "rank";
  // Binned, the rank matrix repeats much of the node matrix above it: coarser bins keep the page small.
  const int maxCells = m.nodeBw.n >= 2 ? kReportMaxCells / 2 : kReportMaxCells;
  Heatmap h = heatmapOf(s, maxCells);
  h.id = "hm-rank";
  h.title = fmt::format("Rank x rank bandwidth, GB/s ({} ranks)", n);
  std::vector<int> present;
  m.rankUnidir.forEachCell([&](int r, int c, float) {
    const int k = static_cast<int>(classOf(s, r, c));
    if (std::find(present.begin(), present.end(), k) == present.end() && k > 0) present.push_back(k);
  });
  std::sort(present.begin(), present.end());
  h.legend = classLegend(m, s.expectedByClass, present, s.slowShare);
  if (n > kReportMaxCells) {
    h.caption = fmt::format("Binned: {} ranks per row and column, each cell the minimum of its block (hover: min, "
                            "median, max). The node matrix above and the findings name the slow parts.",
                            (n + maxCells - 1) / maxCells);
  } else {
    h.caption = "One direction at a time, one pair at a time. Black squares enclose each node's ranks; coloured "
                "inner outlines mark the intra-node link class.";
  }
  renderHeatmap(out, h);
}

void renderHeatmaps(Out out, const ResultsFile& f) {
  fmt::format_to(out, "<section id=\"heatmaps\"><h2>Bandwidth and latency heatmaps</h2>\n");
  const core::Matrices& m = f.matrices;
  if (!f.hasMatrices || !m.pairsMeasured) {
    fmt::format_to(out, "<p class=\"note\">Pairwise bandwidth was not measured in this run "
                        "(<code>--patterns pairwise</code>).</p></section>\n");
    return;
  }
  fmt::format_to(out, "<p class=\"note\">{} mode, {} messages, window {}, {} iterations. Row sends to column; hover "
                      "a cell for its figures. A cell is outlined orange when the analysis would call it slow "
                      "(below {:.2f}x of the expected bandwidth of its link class, lower on a noisy class) or a "
                      "finding names it, red when also below 0.5x; dashed grey when its samples fall on both sides "
                      "of the bar (noisy: the analysis does not judge it).</p>\n",
                 esc(m.mode), core::formatBytes(m.bytes), m.window, m.iters, slowShareOf(f));
  std::vector<std::string> nodeNames;
  for (int i = 0; i < m.nodeBw.n; ++i) nodeNames.push_back(nodeName(f, i));
  if (m.nodeBw.n >= 2) renderNodeHeatmap(out, f, nodeNames);
  bool latencies = false;
  m.nodeLatency.forEachCell([&](int, int, float) { latencies = true; });
  if (m.nodeLatency.n >= 2 && latencies) {
    renderHeatmap(out, nodeLatencyHeatmap(f, nodeNames));
  }
  if (m.rankUnidir.n >= 2) renderRankHeatmap(out, f);
  fmt::format_to(out, "</section>\n");
}

// The GPU-pair copy matrices of the first nodes (the file holds every node).
void renderCopies(Out out, const ResultsFile& f) {
  const core::Matrices& m = f.matrices;
  if (!f.hasMatrices || m.copies.empty()) return;
  fmt::format_to(out, "<section id=\"copies\"><h2>GPU-pair copies inside nodes</h2>\n<p class=\"note\">{} per copy, "
                      "{} copies per direction; row writes into column.</p>\n",
                 core::formatBytes(m.copyBytes), m.copyIters);
  constexpr std::size_t kNodesShown = 4;
  for (std::size_t i = 0; i < m.copies.size() && i < kNodesShown; ++i) {
    const core::CopyMatrices& c = m.copies[i];
    for (std::size_t k = 0; k < c.methods.size(); ++k) {
      const auto& x = c.methods[k];
      // a damaged file's copy matrices may disagree with their own rank list: skip those
      if (x.writeUnidir.n < 2 || x.writeUnidir.n > kReportMaxCells || x.writeUnidir.n != c.n() ||
          c.gpus.size() != c.ranks.size()) {
        continue;
      }
      MatrixSource s;
      s.bw = &x.writeUnidir;
      s.noun = "GPU";
      for (int r = 0; r < c.n(); ++r) {
        const int gpu = c.gpus[static_cast<std::size_t>(r)];
        const int rank = c.ranks[static_cast<std::size_t>(r)];
        s.names.push_back(gpu >= 0 ? fmt::format("GPU{} (rank {})", gpu, rank) : fmt::format("rank {}", rank));
        s.axis.push_back(gpu >= 0 ? fmt::format("GPU{}", gpu) : fmt::format("r{}", rank));
      }
      Heatmap h = fullHeatmap(s);
      h.id = fmt::format("hm-copy-{}-{}", i, k);
      h.judged = false;
      for (int a = 0; a < c.n(); ++a) {
        for (int b = 0; b < c.n(); ++b) {
          const std::size_t idx = cellIndex(c.n(), a, b);
          if (idx < c.path.size() && !h.tip[idx].empty()) h.tip[idx] += " via " + c.path[idx];
        }
      }
      h.title = fmt::format("{}: {} copy write bandwidth, GB/s", nodeName(f, c.node),
                            x.method == "ce" ? "copy-engine" : x.method == "sm" ? "SM-kernel" : x.method);
      renderHeatmap(out, h);
    }
  }
  if (m.copies.size() > kNodesShown) {
    fmt::format_to(out, "<p class=\"note\">Copy matrices of {} more nodes are in /matrix/gpu of the file.</p>\n",
                   m.copies.size() - kNodesShown);
  }
  fmt::format_to(out, "</section>\n");
}

// ---- busbw curves ------------------------------------------------------------------------------

struct Series {
  std::vector<std::pair<double, double>> points;  // (bytes, GB/s)
  bool inPlace = false;
  bool faint = false;
};

// "nice" upper bound of an axis: 1, 2, 2.5, 5 x 10^k.
double niceCeil(double v) {
  if (!(v > 0)) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (const double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (v <= m * p) return m * p;
  }
  return 10 * p;
}

struct CurveKey {
  std::string scope, op, dtype, redop;
  auto operator<=>(const CurveKey&) const = default;
};

// A busbw chart's axes: log2 of the message sizes across, busbw up from 0 to `ymax`.
constexpr int kChartW = 460, kChartH = 284, kChartL = 54, kChartR = 26, kChartT = 40, kChartB = 42;
struct ChartScale {
  explicit ChartScale(const std::vector<Series>& series) {
    for (const auto& s : series) {
      for (const auto& [x, y] : s.points) {
        xlo = std::min(xlo, std::log2(std::max(x, 1.0)));
        xhi = std::max(xhi, std::log2(std::max(x, 1.0)));
        if (finite(y)) ymax = std::max(ymax, y);
      }
    }
    if (!finite(xlo) || !finite(xhi)) {
      xlo = 0;
      xhi = 1;
    }
    if (!(xhi > xlo)) {
      xlo -= 1;
      xhi += 1;
    }
    ymax = niceCeil(ymax * 1.05);
  }
  double px(double bytes) const {
    return kChartL + (std::log2(std::max(bytes, 1.0)) - xlo) / (xhi - xlo) * (kChartW - kChartL - kChartR);
  }
  double py(double y) const { return kChartT + (1 - (finite(y) ? y : 0) / ymax) * (kChartH - kChartT - kChartB); }
  double xlo = std::numeric_limits<double>::infinity();
  double xhi = -std::numeric_limits<double>::infinity();
  double ymax = 0;
};

void renderChartAxes(Out out, const ChartScale& scale) {
  constexpr int kW = kChartW, kH = kChartH, kL = kChartL, kR = kChartR, kT = kChartT, kB = kChartB;
  const double xlo = scale.xlo;
  const double xhi = scale.xhi;
  const double ymax = scale.ymax;
  const auto px = [&](double bytes) { return scale.px(bytes); };
  const auto py = [&](double y) { return scale.py(y); };
  // y grid and ticks
  fmt::format_to(out, "<g font-size=\"10\" fill=\"#475569\">");
  for (int t = 0; t <= 5; ++t) {
    const double y = ymax * t / 5;
    fmt::format_to(out, "<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#e2e8f0\"/>"
                        "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" dominant-baseline=\"middle\">{}</text>",
                   kL, kW - kR, py(y), py(y), kL - 4, py(y), fmt::format("{:g}", y));
  }
  // x ticks at powers of two, at most about 8 labelled
  const int e0 = static_cast<int>(std::ceil(xlo - 1e-9));
  const int e1 = static_cast<int>(std::floor(xhi + 1e-9));
  const int step = std::max(1, (e1 - e0 + 7) / 8);
  for (int e = e0; e <= e1; ++e) {
    if ((e - e0) % step != 0) continue;
    const double x = px(std::ldexp(1.0, e));
    fmt::format_to(out, "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{}\" y2=\"{}\" stroke=\"#e2e8f0\"/>"
                        "<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                   x, x, kT, kH - kB, x, kH - kB + 13, core::formatBytes(std::uint64_t{1} << std::clamp(e, 0, 62)));
  }
  fmt::format_to(out, "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">message size (log scale)</text>",
                 (kL + kW - kR) / 2, kH - 8);
  fmt::format_to(out, "<text transform=\"translate(12,{}) rotate(-90)\" text-anchor=\"middle\">busbw (GB/s)</text>",
                 (kT + kH - kB) / 2);
  fmt::format_to(out, "<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"#64748b\"/>", kL, kW - kR, kH - kB, kH - kB);
  fmt::format_to(out, "</g>");
}

void renderChartCurves(Out out, const ChartScale& scale, const std::vector<Series>& series,
                       const std::vector<std::tuple<double, double, std::string>>& dots) {
  const auto px = [&](double bytes) { return scale.px(bytes); };
  const auto py = [&](double y) { return scale.py(y); };
  for (const bool faint : {true, false}) {
    for (const auto& s : series) {
      if (s.faint != faint || s.points.empty()) continue;
      std::string path;
      for (const auto& [x, y] : s.points) {
        if (!finite(y)) continue;  // a gap in a damaged file's figures
        path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "M" : " L", px(x), py(y));
      }
      fmt::format_to(out, "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"{}{}/>", path,
                     s.inPlace ? "#ea580c" : "#2563eb", faint ? 1 : 2, s.inPlace ? " stroke-dasharray=\"5 3\"" : "",
                     faint ? " stroke-opacity=\"0.3\"" : "");
    }
  }
  for (const auto& [x, y, tip] : dots) {
    if (!finite(y)) continue;
    fmt::format_to(out, "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"#fff\" stroke=\"#334155\"><title>{}</title></circle>",
                   px(x), py(y), esc(tip));
  }
}

void renderChart(Out out, const CurveKey& key, const std::vector<Series>& series,
                 const std::vector<std::tuple<double, double, std::string>>& dots, const std::string& caption) {
  constexpr int kW = kChartW, kH = kChartH, kL = kChartL, kT = kChartT;
  const ChartScale scale(series);
  fmt::format_to(out, "<div class=\"chart\"><svg width=\"{}\" height=\"{}\" "
                      "viewBox=\"0 0 {} {}\" role=\"img\">",
                 kW, kH, kW, kH);
  fmt::format_to(out, "<text x=\"{}\" y=\"16\" font-size=\"13\" font-weight=\"600\" fill=\"#0f172a\">{} \u00b7 {}{}</text>",
                 kL, esc(shortened(key.op, 24)), esc(shortened(key.scope, 12)),
                 esc(shortened(fmt::format(" \u00b7 {}{}", key.dtype, key.redop == "none" || key.redop.empty() ? "" : " " + key.redop), 24)));
  renderChartAxes(out, scale);
  renderChartCurves(out, scale, series, dots);
  // legend, between the title and the plot (the curves rise to the top right)
  fmt::format_to(out, "<g font-size=\"10\" fill=\"#334155\"><line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"#2563eb\" stroke-width=\"2\"/>"
                      "<text x=\"{3}\" y=\"{4}\">out-of-place</text>",
                 kL, kL + 16, kT - 10, kL + 20, kT - 7);
  fmt::format_to(out, "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"#ea580c\" stroke-width=\"2\" stroke-dasharray=\"5 3\"/>"
                      "<text x=\"{3}\" y=\"{4}\">in-place</text></g>",
                 kL + 100, kL + 116, kT - 10, kL + 120, kT - 7);
  fmt::format_to(out, "</svg><p>{}</p></div>\n", caption);
}

// One curve key's chart: the median over the scope's groups per placement, faint lines per group.
using Placements = std::map<bool, std::map<std::uint64_t, std::map<int, const core::CollectiveRecord*>>>;
void renderCurve(Out out, const CurveKey& key, const Placements& placements) {
  std::vector<Series> series;
  std::vector<std::tuple<double, double, std::string>> dots;
  std::map<bool, BusbwPeakAccumulator> peaks;  // per placement, as every view states it (busbw_peak.h)
  std::uint64_t wrong = 0;
  std::set<int> groups;
  for (const auto& [inPlace, sizes] : placements) {
    Series med;
    med.inPlace = inPlace;
    std::map<int, Series> perGroup;
    for (const auto& [bytes, byGroup] : sizes) {
      std::vector<double> bus;
      std::vector<double> alg;
      std::vector<double> times;
      for (const auto& [g, r] : byGroup) {
        groups.insert(g);
        bus.push_back(r->busbw);
        alg.push_back(r->algbw);
        times.push_back(r->timeUs.mean);
        wrong += r->wrong;
        peaks[inPlace].add(*r);
        perGroup[g].points.emplace_back(static_cast<double>(bytes), r->busbw);
      }
      const double m = core::median(bus);
      med.points.emplace_back(static_cast<double>(bytes), m);
      const auto [lo, hi] = std::minmax_element(bus.begin(), bus.end());
      std::string tip = fmt::format("{} {} {}, {}: busbw {} GB/s, algbw {} GB/s, time {} us", key.op, key.scope,
                                    core::formatBytes(bytes), inPlace ? "in-place" : "out-of-place", bwText(m),
                                    bwText(core::median(alg)), usText(core::median(times)));
      if (bus.size() > 1) {
        tip += fmt::format(" (medians of {} groups; busbw {} .. {})", bus.size(), bwText(*lo), bwText(*hi));
      }
      dots.emplace_back(static_cast<double>(bytes), m, std::move(tip));
    }
    if (groups.size() >= 2 && groups.size() <= 8) {
      for (auto& [g, s] : perGroup) {
        s.inPlace = inPlace;
        s.faint = true;
        series.push_back(std::move(s));
      }
    }
    series.push_back(std::move(med));
  }
  const auto peakText = [&](bool inPlace) -> std::string {
    const BusbwPeak p = peaks[inPlace].peak();
    if (!std::isfinite(p.busbw)) return "-";
    // two decimals, as nccl-tests prints busbw: the figure show and compare state
    return p.groups == 1 ? fmt::format("{:.2f} GB/s at {}", p.busbw, core::formatBytes(p.bytes))
                         : fmt::format("{:.2f} GB/s (median of {} groups' peaks)", p.busbw, p.groups);
  };
  const std::string caption =
      fmt::format("peak busbw out-of-place <b>{}</b>, in-place {}; {}{}", peakText(false), peakText(true),
                  plural(groups.size(), "group", "groups"),
                  wrong > 0 ? fmt::format("; <span class=\"sev-error\">{} wrong elements</span>", wrong) : "");
  renderChart(out, key, series, dots, caption);
}

// The waived steps, once per reason.
void renderWaived(Out out, const ResultsFile& f) {
  std::set<std::string> waived;
  for (const auto& s : f.steps) {
    if (s.status == "waived") waived.insert(fmt::format("{} {} in scope {}: {}", s.op, s.dtype, s.scope, s.reason));
  }
  if (!waived.empty()) {
    fmt::format_to(out, "<h3>Waived</h3><ul>");
    std::size_t shown = 0;
    for (const auto& w : waived) {
      if (shown++ < 20) fmt::format_to(out, "<li>{}</li>", esc(w));
    }
    fmt::format_to(out, "</ul>{}\n", waived.size() > 20 ? fmt::format("<p class=\"note\">and {} more</p>", waived.size() - 20) : "");
  }
}

void renderCurves(Out out, const ResultsFile& f) {
  fmt::format_to(out, "<section id=\"curves\"><h2>Collectives: bus bandwidth vs message size</h2>\n");
  if (f.collectives.empty()) {
    fmt::format_to(out, "<p class=\"note\">No collective sweep in this run (<code>--patterns collectives</code>).</p>"
                        "</section>\n");
    return;
  }
  for (const auto& s : f.scopes) {
    fmt::format_to(out, "<p class=\"note\">scope <b>{}</b>: {}</p>\n", esc(s.scope),
                   s.status == "waived" ? "waived (" + esc(s.reason) + ")"
                                        : fmt::format("{} [{}]", plural(static_cast<std::size_t>(std::max(s.groups, 0)),
                                                                        "group", "groups"), esc(s.members)));
  }
  fmt::format_to(out, "<p class=\"note\">busbw from each group's mean time, as nccl-tests prints it; the line is "
                      "the median over the scope's groups, faint lines each group (up to 8). Hover a point for the "
                      "spread.</p>\n<div class=\"charts\">\n");
  // (key) -> in-place -> bytes -> group -> record
  std::map<CurveKey, Placements> curves;
  std::vector<CurveKey> order;  // as the run measured them: scope by scope, op by op
  for (const auto& r : f.collectives) {
    CurveKey key{r.scope, r.op, r.dtype, r.redop};
    if (!curves.contains(key)) order.push_back(key);
    curves[key][r.inPlace][r.bytes][r.group] = &r;
  }
  for (const auto& key : order) renderCurve(out, key, curves[key]);
  fmt::format_to(out, "</div>\n");
  renderWaived(out, f);
  fmt::format_to(out, "</section>\n");
}

// ---- topology ----------------------------------------------------------------------------------

std::string linkCodeClass(const std::string& code) {
  if (code.rfind("NV", 0) == 0) return "gl-nv";
  if (code == "PIX" || code == "PXB" || code == "PHB") return "gl-pci";
  if (code == "NODE" || code == "SYS") return "gl-sys";
  return "";
}

void renderTopology(Out out, const ResultsFile& f) {
  const core::Topology& t = f.topology;
  fmt::format_to(out, "<section id=\"topology\"><h2>Topology</h2>\n");
  std::map<std::string, std::vector<int>> byClass;
  for (const auto& n : t.nodes) byClass[n.topologyClass].push_back(n.node);
  std::string classes;
  for (const auto& [cls, nodes] : byClass) {
    classes += fmt::format("{}<b>{}</b> {}", classes.empty() ? "" : ", ", esc(cls.empty() ? "?" : cls),
                           plural(nodes.size(), "node", "nodes"));
    if (byClass.size() > 1) classes += fmt::format(" ({})", core::formatRanks(nodes));
  }
  fmt::format_to(out, "<p>{} on {}{}: {}.</p>\n", plural(t.ranks.size(), "rank", "ranks"),
                 plural(t.nodes.size(), "node", "nodes"),
                 t.emulated ? fmt::format(" (emulated: blocks of {} ranks)", t.ranksPerNode) : "", classes);
  // a 512-node table is there, folded
  const bool fold = t.nodes.size() > 32;
  fmt::format_to(out, "{}<table><tr><th>node</th><th>name</th><th>ranks</th><th>GPUs</th><th>class</th>"
                      "<th>NVSwitch</th><th>NICs</th><th>CPUs</th><th>memory</th><th>warnings</th></tr>\n",
                 fold ? fmt::format("<details><summary>all {} nodes</summary>", t.nodes.size()) : "");
  std::map<int, std::vector<int>> ranksOf;  // per node, made once: a scan per node is quadratic
  for (const auto& r : t.ranks) ranksOf[r.node].push_back(r.rank);
  for (const auto& n : t.nodes) {
    const std::vector<int>& ranks = ranksOf[n.node];
    fmt::format_to(out, "<tr><td class=\"n\">{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td>{}</td><td>{}</td>"
                        "<td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>\n",
                   n.node, esc(n.name), core::formatRanks(ranks), n.gpus, esc(n.topologyClass), esc(n.nvswitch),
                   esc(n.nics), n.cpus > 0 ? fmt::format("{}", n.cpus) : "?",
                   n.memAvailableBytes > 0 ? core::formatBytes(n.memAvailableBytes) : "?", esc(n.topologyWarnings));
  }
  fmt::format_to(out, "</table>{}\n", fold ? "</details>" : "");
  // GPU link matrices: each distinct one once, with the nodes that have it
  std::map<std::vector<std::string>, std::vector<int>> byLinks;
  for (const auto& n : t.nodes) {
    if (n.gpuLinkCount() >= 2) byLinks[n.gpuLinks].push_back(n.node);
  }
  constexpr std::size_t kLinkMatricesShown = 8;
  std::size_t shown = 0;
  for (const auto& [links, nodes] : byLinks) {
    if (shown++ >= kLinkMatricesShown) break;
    const int g = static_cast<int>(std::lround(std::sqrt(static_cast<double>(links.size()))));
    if (cellIndex(g, g, 0) != links.size()) continue;  // not square: a damaged file
    fmt::format_to(out, "<h3>GPU links of {} ({})</h3><table><tr><th></th>", plural(nodes.size(), "node", "nodes"),
                   nodes.size() <= 4 ? esc(nodeName(f, nodes.front())) + (nodes.size() > 1 ? ", ..." : "")
                                     : "nodes " + core::formatRanks(nodes));
    for (int c = 0; c < g; ++c) fmt::format_to(out, "<th>GPU{}</th>", c);
    fmt::format_to(out, "</tr>");
    for (int r = 0; r < g; ++r) {
      fmt::format_to(out, "<tr><th>GPU{}</th>", r);
      for (int c = 0; c < g; ++c) {
        const std::string& code = links[cellIndex(g, r, c)];
        const std::string cls = linkCodeClass(code);
        fmt::format_to(out, "<td{}>{}</td>", cls.empty() ? "" : " class=\"" + cls + "\"", esc(code));
      }
      fmt::format_to(out, "</tr>");
    }
    fmt::format_to(out, "</table>\n");
  }
  if (byLinks.size() > kLinkMatricesShown) {
    fmt::format_to(out, "<p class=\"note\">{} more distinct GPU link matrices in /topology/gpu_links.</p>\n",
                   byLinks.size() - kLinkMatricesShown);
  }
  // ranks: where each one ran, for runs small enough to read rank by rank
  if (!t.ranks.empty() && t.ranks.size() <= 256) {
    fmt::format_to(out, "<details><summary>{} </summary><table><tr><th>rank</th><th>node</th><th>local</th><th>host</th>"
                        "<th>GPU</th><th>bus id</th><th>NIC</th><th>NIC path</th><th>CPU</th><th>NUMA</th></tr>\n",
                   plural(t.ranks.size(), "rank", "ranks"));
    for (const auto& r : t.ranks) {
      fmt::format_to(out, "<tr><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td><td>{}</td>"
                          "<td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>\n",
                     r.rank, r.node, r.localRank, esc(r.hostname),
                     r.gpuIndex >= 0 ? fmt::format("{} {}", r.gpuIndex, esc(r.gpuName)) : "none", esc(r.gpuBusId),
                     esc(r.nic), esc(r.nicPath), r.cpu, r.numaNode);
    }
    fmt::format_to(out, "</table></details>\n");
  }
  fmt::format_to(out, "</section>\n");
}

// ---- training pattern and scaling --------------------------------------------------------------

void renderPatterns(Out out, const ResultsFile& f) {
  if (f.training.empty() && f.scaling.empty()) return;
  fmt::format_to(out, "<section id=\"patterns\"><h2>Training pattern and scaling</h2>\n");
  if (!f.training.empty()) {
    fmt::format_to(out, "<h3>Training traffic, layout {}</h3><p class=\"note\">Per training step, {} steps timed; time "
                        "= the slowest rank's; interference = concurrent / isolated time of the same traffic (1.0: "
                        "none).</p>\n<table><tr><th>mode</th><th>traffic</th><th>ops</th><th>groups x ranks</th>"
                        "<th>message</th><th>msgs</th><th>time (us)</th><th>algbw (GB/s)</th><th>busbw (GB/s)</th>"
                        "<th>interference</th></tr>\n",
                   esc(f.layout.empty() ? "?" : f.layout), f.training.front().iters);
    for (const auto& r : f.training) {
      const bool bad = finite(r.interference) && r.interference >= 1.5;
      fmt::format_to(out, "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{} x {}</td><td class=\"n\">{}</td>"
                          "<td class=\"n\">{}</td><td class=\"n\">{:.1f}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
                          "<td class=\"n{}\">{}</td></tr>\n",
                     esc(r.mode), esc(r.traffic), esc(r.ops), r.groups, r.nranks, core::formatBytes(r.bytes), r.messages,
                     r.timeUs.median, bwText(r.algbw), bwText(r.busbw), bad ? " sev-warning" : "",
                     finite(r.interference) ? fmt::format("{:.2f}", r.interference) : "-");
    }
    fmt::format_to(out, "</table>\n");
  }
  if (!f.scaling.empty()) {
    fmt::format_to(out, "<h3>Scaling</h3><p class=\"note\">all_reduce of {} per rank on growing groups (the slowest "
                        "group shown); efficiency = busbw / the best busbw at a smaller group of the level, a full node below "
                        "0.8 is a finding.</p>\n<table><tr><th>level</th><th>n</th><th>groups x ranks</th>"
                        "<th>time (us)</th><th>algbw (GB/s)</th><th>busbw (GB/s)</th><th>efficiency</th><th></th></tr>\n",
                   core::formatBytes(f.scaling.front().bytes));
    for (const auto& r : f.scaling) {
      const bool low = finite(r.efficiency) && r.efficiency < 0.8;
      fmt::format_to(out, "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{} x {}</td><td class=\"n\">{:.1f}</td>"
                          "<td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n{}\">{}</td><td>{}</td></tr>\n",
                     esc(r.level), r.n, r.groups, r.nranks, r.timeUs.median, bwText(r.algbw), bwText(r.busbw),
                     low ? " sev-warning" : "", finite(r.efficiency) ? fmt::format("{:.2f}", r.efficiency) : "-",
                     fmt::format("{}{}", r.noisy ? "noisy " : "",
                                 r.wrong > 0 ? fmt::format("<span class=\"sev-error\">{} wrong</span>", r.wrong) : ""));
    }
    fmt::format_to(out, "</table>\n");
  }
  fmt::format_to(out, "</section>\n");
}

// ---- provenance --------------------------------------------------------------------------------

void renderProvenance(Out out, const ResultsFile& f) {
  const core::Provenance& p = f.provenance;
  fmt::format_to(out, "<section id=\"provenance\"><h2>Provenance</h2><table>\n");
  const auto row = [&](std::string_view name, const std::string& value) {
    if (value.empty()) return;
    fmt::format_to(out, "<tr><th>{}</th><td>{}</td></tr>\n", name, esc(value));
  };
  row("file", f.path);
  row("fabricmap", p.toolVersion + (p.gitRevision.empty() ? "" : " (" + p.gitRevision + ")"));
  row("schema", fmt::format("v{}", p.schemaVersion));
  row("created (UTC)", p.createdUtc);
  row("complete", f.complete ? "yes" : "no");
  row("command line", p.commandLine);
  row("backend", p.backend);
  row("ranks, nodes", fmt::format("{}, {}{}", p.worldSize, p.nodeCount,
                                  p.emulated ? fmt::format(" (emulated, {} ranks per node)", p.ranksPerNode) : ""));
  row("MPI", p.mpiVersion + (p.mpiTransport.empty() ? "" : " (" + p.mpiTransport + ")"));
  row("NCCL", p.ncclVersion);
  row("UCX", p.ucxVersion + (p.ucxEnvironment.empty() ? "" : " (" + p.ucxEnvironment + ")"));
  row("CUDA runtime", p.cudaRuntimeVersion);
  row("CUDA driver", p.cudaDriverVersion);
  row("Slurm job", p.slurmJobId + (p.slurmNodelist.empty() ? "" : " on " + p.slurmNodelist));
  row("planned steps", fmt::format("{}", p.plannedSteps));
  row("resumed", p.resumed);
  row("read from journal", f.recoveredFrom);
  fmt::format_to(out, "</table>\n");
  const auto block = [&](std::string_view name, const std::string& value) {
    if (!value.empty()) fmt::format_to(out, "<details><summary>{}</summary><pre>{}</pre></details>\n", name, esc(value));
  };
  block("hosts", p.hostnames);
  block("NCCL environment", p.ncclEnvironment);
  std::string endpoints;
  for (const auto& [ranks, transports] : endpointWays(f.topology.inventory.endpoints)) {
    endpoints += fmt::format("ranks {}: {}\n", ranks, transports);
  }
  block("endpoints (transports per peer)", endpoints);
  block("run configuration", p.runConfig);
  fmt::format_to(out, "</section>\n");
}

std::string extraLinks(const std::vector<ReportSection>& extra) {
  std::string links;
  for (const ReportSection& s : extra) links += fmt::format("<a href=\"#{}\">{}</a>", esc(s.id), esc(s.title));
  return links;
}

void renderExtra(Out out, const std::vector<ReportSection>& extra) {
  for (const ReportSection& s : extra) {
    fmt::format_to(out, "<section id=\"{}\"><h2>{}</h2>\n{}</section>\n", esc(s.id), esc(s.title), s.html);
  }
}

}  // namespace

std::string renderReport(const ResultsFile& file, const std::vector<ReportSection>& extra) {
  std::string page;
  page.reserve(64 * 1024);
  Out out(page);
  const core::Provenance& p = file.provenance;
  std::string name = file.path;
  if (const auto slash = name.find_last_of('/'); slash != std::string::npos) name = name.substr(slash + 1);
  fmt::format_to(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                      "<title>fabricmap report: {}</title>\n<style>{}</style></head><body>\n",
                 esc(name), kStyle);
  fmt::format_to(out, "<header><h1>fabricmap report: {}</h1><p>{} backend, {} on {}{}; created {}; fabricmap {}{}</p></header>\n",
                 esc(name), esc(p.backend), plural(static_cast<std::size_t>(std::max(p.worldSize, 0)), "rank", "ranks"),
                 plural(static_cast<std::size_t>(std::max(p.nodeCount, 0)), "node", "nodes"),
                 p.emulated ? " (emulated)" : "", esc(p.createdUtc), esc(p.toolVersion),
                 file.complete ? "" : " &mdash; INCOMPLETE");
  fmt::format_to(out, "<nav><a href=\"#verdict\">Verdict</a><a href=\"#heatmaps\">Heatmaps</a>{}<a href=\"#curves\">"
                      "Collectives</a><a href=\"#topology\">Topology</a>{}{}{}<a href=\"#provenance\">Provenance</a></nav>\n<main>\n",
                 file.hasMatrices && !file.matrices.copies.empty() ? "<a href=\"#copies\">Copies</a>" : "",
                 file.topology.inventory.nodes.empty() ? "" : "<a href=\"#inventory\">Inventory</a>",
                 file.training.empty() && file.scaling.empty() ? "" : "<a href=\"#patterns\">Training &amp; scaling</a>",
                 extraLinks(extra));
  renderVerdict(out, file);
  renderHeatmaps(out, file);
  renderCopies(out, file);
  renderCurves(out, file);
  renderTopology(out, file);
  page += renderInventory(file);
  renderPatterns(out, file);
  renderExtra(out, extra);
  renderProvenance(out, file);
  fmt::format_to(out, "</main></body></html>\n");
  return page;
}

}  // namespace fabricmap::results
