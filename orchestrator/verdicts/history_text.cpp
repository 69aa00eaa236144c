// `fabricmap history` for people: the console tables and the self-contained HTML page.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "orchestrator/verdicts/history.h"
#include "results/report.h"

namespace fabricmap::orchestrator {
namespace {

constexpr std::size_t kConsoleRuns = 40;  // the console's sparkline shows the last runs only

constexpr const char* kRulesText =
    "# bandwidth: a node's median over its row and column of the node matrix, a pair's slower direction (GB/s);\n"
    "# blamed: named by a warning or error finding; trend: last / median of the earlier runs;\n"
    "# flapping: blamed in a run and clean in a later one; newly_blamed: blamed in every run since its first blame\n"
    "# clusters: runs whose host sets share a host (directly or through other runs) are one cluster\n";

// Most blamed first, then by name: the subjects to look at lead the table.
std::vector<const SubjectHistory*> byBlame(const std::vector<SubjectHistory>& subjects) {
  std::vector<const SubjectHistory*> out;
  for (const SubjectHistory& s : subjects) out.push_back(&s);
  std::stable_sort(out.begin(), out.end(),
                   [](const SubjectHistory* x, const SubjectHistory* y) { return x->blamed > y->blamed; });
  return out;
}

std::string figure(double v) { return std::isfinite(v) ? fmt::format("{:.2f}", v) : "-"; }
std::string trendText(const SubjectHistory& s) { return s.trend ? fmt::format("{:.2f}", *s.trend) : "-"; }
double lastBandwidth(const SubjectHistory& s) {
  const std::vector<double> bw = s.bandwidths();
  return bw.empty() ? kNoValue : bw.back();
}

std::string subjectTable(const std::vector<SubjectHistory>& subjects, const char* what) {
  std::size_t width = std::string_view(what).size();
  for (const SubjectHistory& s : subjects) width = std::max(width, s.label().size());
  std::string out =
      fmt::format("# {:<{}}  {:>4}  {:>6}  {:<20}  {:<20}  {:>9}  {:>5}  {:<12}  {}\n", what, width, "runs", "blamed",
                  "first seen", "last seen", "last GB/s", "trend", "status", "bandwidth, oldest to newest");
  for (const SubjectHistory* s : byBlame(subjects)) {
    const std::vector<double> bw = s->bandwidths();
    const std::size_t from = bw.size() > kConsoleRuns ? bw.size() - kConsoleRuns : 0;
    out += fmt::format("  {:<{}}  {:>4}  {:>6}  {:<20}  {:<20}  {:>9}  {:>5}  {:<12}  {}\n", s->label(), width,
                       s->runs.size(), s->blamed, s->firstSeen, s->lastSeen, figure(lastBandwidth(*s)), trendText(*s),
                       name(s->status),
                       sparkline(std::vector<double>(bw.begin() + static_cast<std::ptrdiff_t>(from), bw.end())));
  }
  return out;
}

// An inline SVG line of the measured bandwidths, blamed runs marked.
std::string svgSparkline(const SubjectHistory& s) {
  constexpr double kWidth = 160;
  constexpr double kHeight = 24;
  std::vector<std::pair<double, bool>> points;
  for (const SubjectRun& r : s.runs) {
    if (std::isfinite(r.bandwidth)) points.emplace_back(r.bandwidth, r.blamed);
  }
  if (points.empty()) return "-";
  const auto range = std::minmax_element(points.begin(), points.end());
  const double low = range.first->first;  // a plain value: a lambda cannot capture a structured binding under clang 14
  const double span = range.second->first - low;
  const auto x = [&](std::size_t i) {
    return points.size() == 1 ? kWidth / 2 : kWidth * static_cast<double>(i) / static_cast<double>(points.size() - 1);
  };
  const auto y = [&](double v) {
    return span > 0 ? kHeight - 2 - (v - low) / span * (kHeight - 4) : kHeight / 2;
  };
  std::string line;
  std::string marks;
  for (std::size_t i = 0; i < points.size(); ++i) {
    line += fmt::format("{:.1f},{:.1f} ", x(i), y(points[i].first));
    if (points[i].second)
      marks +=
          fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" class=\"blamed\"/>", x(i), y(points[i].first));
  }
  if (points.size() == 1 && marks.empty())
    marks = fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2\"/>", x(0), y(points[0].first));
  return fmt::format("<svg width=\"{0}\" height=\"{1}\" viewBox=\"-3 -3 {2} {3}\"><polyline points=\"{4}\"/>{5}</svg>",
                     kWidth, kHeight, kWidth + 6, kHeight + 6, line, marks);
}

std::string subjectRows(const std::vector<SubjectHistory>& subjects) {
  std::string out;
  for (const SubjectHistory* s : byBlame(subjects)) {
    out += fmt::format(
        "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td></tr>\n",
        name(s->status), results::htmlEscape(s->label()), s->runs.size(), s->blamed, results::htmlEscape(s->firstSeen),
        results::htmlEscape(s->lastSeen), figure(lastBandwidth(*s)), trendText(*s), name(s->status), svgSparkline(*s));
  }
  return out;
}

std::string subjectSection(const std::vector<SubjectHistory>& subjects, const char* title, const char* what) {
  if (subjects.empty()) return fmt::format("<h2>{}</h2>\n<p class=\"note\">none</p>\n", title);
  return fmt::format(
      "<h2>{}</h2>\n<table><tr><th>{}</th><th>runs</th><th>blamed</th><th>first seen</th><th>last "
      "seen</th><th>last GB/s</th><th>trend</th><th>status</th><th>bandwidth, oldest to newest</th></tr>\n"
      "{}</table>\n",
      title, what, subjectRows(subjects));
}

std::string runsSection(const History& h) {
  std::string rows;
  for (const HistoryRunInfo& r : h.runs) {
    rows += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                        results::htmlEscape(r.createdUtc), results::htmlEscape(r.path),
                        results::htmlEscape(r.hostnames), results::htmlEscape(r.backend), r.nodes, r.blames);
  }
  std::string skipped;
  for (const SkippedFile& s : h.skipped) {
    skipped += fmt::format("<li>{}: {}</li>\n", results::htmlEscape(s.path), results::htmlEscape(s.reason));
  }
  return fmt::format(
      "<h2>Runs</h2>\n<details><summary>{} runs</summary><table><tr><th>created</th><th>file</th>"
      "<th>hosts</th><th>backend</th><th>nodes</th><th>blames</th></tr>\n{}</table></details>\n{}",
      h.runs.size(), rows, skipped.empty() ? "" : fmt::format("<h2>Skipped files</h2>\n<ul>\n{}</ul>\n", skipped));
}

std::string warningsHtml(const History& h) {
  std::string out;
  for (const std::string& w : h.warnings)
    out += fmt::format("<p class=\"warning\">warning: {}</p>\n", results::htmlEscape(w));
  return out;
}

constexpr const char* kStyle =
    "body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse}"
    "td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:middle}"
    "tr.flapping td:first-child{border-left:4px solid #e69f00}tr.blamed td:first-child,"
    "tr.newly_blamed td:first-child{border-left:4px solid #c0392b}polyline{fill:none;stroke:#2c6fbb;stroke-width:1.5}"
    "circle{fill:#2c6fbb}circle.blamed{fill:#c0392b}.note{color:#666}.warning{color:#a04000;font-weight:600}";

}  // namespace

std::string historyToText(const History& h) {
  std::string out = fmt::format("# fabricmap history: {} run{}", h.runs.size(), h.runs.size() == 1 ? "" : "s");
  if (!h.runs.empty()) out += fmt::format(", {} to {}", h.runs.front().createdUtc, h.runs.back().createdUtc);
  if (!h.skipped.empty()) out += fmt::format("; {} file{} skipped", h.skipped.size(), h.skipped.size() == 1 ? "" : "s");
  if (h.clusters.size() > 1) out += fmt::format("; {} clusters (host sets sharing no host)", h.clusters.size());
  out += "\n#\n";
  for (const std::string& w : h.warnings) out += fmt::format("# warning: {}\n#\n", w);
  out += subjectTable(h.nodes, "node");
  out += "#\n";
  out += h.pairs.empty() ? "# no node pair blamed in any run\n" : subjectTable(h.pairs, "node pair (blamed in a run)");
  out += "#\n";
  out += kRulesText;
  return out;
}

std::string historyToHtml(const History& h) {
  std::string span = h.runs.empty() ? std::string()
                                    : fmt::format(", {} to {}", results::htmlEscape(h.runs.front().createdUtc),
                                                  results::htmlEscape(h.runs.back().createdUtc));
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>fabricmap history</title>"
      "<style>{}</style></head>\n<body>\n<h1>fabricmap history</h1>\n<p>{} runs{}; files skipped: {}</p>\n"
      "{}{}{}{}<pre class=\"note\">{}</pre>\n</body></html>\n",
      kStyle, h.runs.size(), span, h.skipped.size(), warningsHtml(h), subjectSection(h.nodes, "Nodes", "node"),
      subjectSection(h.pairs, "Node pairs blamed in a run", "node pair"), runsSection(h),
      results::htmlEscape(kRulesText));
}

}  // namespace fabricmap::orchestrator
