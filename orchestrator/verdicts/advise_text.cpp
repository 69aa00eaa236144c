// The words of advice shared by the console and the report, and the report's advice section (see
// advise.h). Formatting only: the choices were advise()'s.
#include <fmt/format.h>

#include "core/units.h"
#include "orchestrator/verdicts/advise.h"
#include "results/report.h"

namespace fabricmap::orchestrator {
namespace {

using results::htmlEscape;

double gib(double bytes) { return bytes / (1ull << 30); }

std::string cellOf(const std::optional<double>& v, const char* format) {
  return v ? fmt::format(fmt::runtime(format), *v) : std::string("-");
}

std::string percent(const std::optional<double>& share) {
  return share ? fmt::format("{:.1f} %", *share * 100) : std::string("-");
}

std::string trainingRow(int rank, const Candidate& k) {
  const MemoryChoice& m = k.choice;
  const Prediction& p = *k.prediction;
  return fmt::format(
      "<tr><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td>"
      "<td class=\"n\">{}</td><td>{}</td><td class=\"n\">{:.1f}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
      "<td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>\n",
      rank, htmlEscape(core::formatLayout(m.layout)), m.microBatch, m.virtualStages, m.sequenceParallel ? "on" : "-",
      m.zeroStage, recomputeName(m.recompute), gib(k.memory.total()), cellOf(p.stepSeconds, "{:.3g}"),
      percent(p.stepMfu), percent(p.utilization), cellOf(p.tokensPerSecond, "{:.0f}"),
      cellOf(p.days, "{:.1f}"), cellOf(p.cost, "{:.0f}"));
}

// The ranking: priced layouts only.
std::string trainingTable(const Advice& a) {
  std::string html =
      "<table><tr><th>#</th><th>layout</th><th>micro-batch</th><th>virtual stages</th><th>sequence parallel</th>"
      "<th>ZeRO / dist. optimizer</th><th>recompute</th><th>GiB per GPU</th><th>step (s)</th>"
      "<th>step MFU (model FLOPs utilization of the whole step)</th><th>compute share of the step</th>"
      "<th>tokens/s</th><th>days</th><th>cost</th></tr>\n";
  int rank = 0;
  for (const Candidate& k : a.best) html += trainingRow(++rank, k);
  return html + "</table>\n";
}

// What fits but is not priced: no rank, the reasons, what to measure.
std::string unpricedTable(const Advice& a) {
  std::string html = "<table><tr><th>layout (unranked)</th><th>micro-batch</th><th>virtual stages</th>"
                     "<th>sequence parallel</th><th>ZeRO / dist. optimizer</th><th>recompute</th><th>GiB per GPU</th>"
                     "</tr>\n";
  for (const Candidate& k : a.unpriced) {
    const MemoryChoice& m = k.choice;
    html += fmt::format("<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}"
                        "</td><td>{}</td><td class=\"n\">{:.1f}</td></tr>\n",
                        htmlEscape(core::formatLayout(m.layout)), m.microBatch, m.virtualStages,
                        m.sequenceParallel ? "on" : "-", m.zeroStage, recomputeName(m.recompute), gib(k.memory.total()));
  }
  return html + "</table>\n";
}

std::string servingTable(const AdviseConfig& c, const Advice& a) {
  std::string html = fmt::format("<table><tr><th>#</th><th>layout</th><th>GiB per GPU</th><th>sequences of {} tokens "
                                 "(KV cache beside the weights)</th></tr>\n",
                                 c.base.seq);
  int rank = 0;
  for (const Candidate& k : a.best) {
    html += fmt::format("<tr><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{:.1f}</td><td class=\"n\">{}</td></tr>\n",
                        ++rank, htmlEscape(core::formatLayout(k.choice.layout)), gib(k.memory.total()), k.sequences);
  }
  return html + "</table>\n";
}

std::string paragraph(const std::string& text) { return "<p class=\"note\">" + htmlEscape(text) + "</p>\n"; }

std::string unpricedSection(const Advice& a) {
  std::string html =
      a.best.empty()
          ? "<div class=\"verdict v-warn\">" + htmlEscape(nothingPriced(a)) + "</div>\n"
          : paragraph(fmt::format("{} more layout(s) fit but are not priced, so not ranked.", a.unpricedLayouts));
  for (const std::string& why : a.whyUnpriced) html += paragraph("not priced: " + why);
  if (!a.unpriced.empty()) {
    html += paragraph(fmt::format("Fits by memory only (unranked, in layout order: not a recommendation){}:",
                                  a.unpriced.size() < a.unpricedLayouts
                                      ? fmt::format(", {} of {} shown", a.unpriced.size(), a.unpricedLayouts)
                                      : ""));
    html += unpricedTable(a);
  }
  return html;
}

}  // namespace

std::string adviseSubject(const AdviseConfig& c) {
  const ModelSpec& m = c.base.model;
  return fmt::format("{} ({} parameters, {} layers, hidden {}), seq {}, global batch {}, {} {}", m.name,
                     core::formatCount(m.params), m.layers, m.hidden, c.base.seq, c.base.globalBatch,
                     frameworkName(c.framework), c.framework == Framework::kVllm ? "serving" : "training");
}

std::vector<std::string> storageSentences(const AdviseConfig& c, const StorageFeed& s) {
  std::string reads = fmt::format("{:.2f} GB/s of sequential reads from {} rank(s)", s.readGBps, s.readers);
  if (s.loaderGBps) {
    reads += fmt::format("; #1 reads {:.3g} MB/s of tokens ({} B each), {:.2g}% of it", *s.loaderGBps * 1e3,
                         c.bytesPerToken, 100 * *s.loaderGBps / s.readGBps);
  }
  std::string writes =
      s.checkpointSeconds
          ? fmt::format("a checkpoint of {:.0f} GB (14 B per parameter) writes in {:.0f} s at the measured {:.2f} GB/s",
                        s.checkpointBytes / 1e9, *s.checkpointSeconds, *s.writeGBps)
          : std::string("checkpoint time unknown: the run wrote nothing (run --storage PATH --storage-write)");
  return {reads, writes};
}

std::string adviceToHtml(const AdviseConfig& c, const Advice& a) {
  std::string html = paragraph(fmt::format("{}; {} GPUs, {} per node, {:.1f} GiB each ({}), {:.1f} GiB kept as reserve; "
                                           "{} layouts and memory choices considered, {} fit.",
                                           adviseSubject(c), a.gpus, a.gpusPerNode, gib(a.gpuMemoryBytes),
                                           a.memorySource, gib(c.base.reserveBytes), a.considered, a.fitting));
  for (const std::string& note : a.notes) html += paragraph("note: " + note);
  if (!a.doesNotFit.empty()) {
    return html + "<div class=\"verdict v-fail\">Does not fit: " + htmlEscape(a.doesNotFit) + "</div>\n";
  }
  if (a.optionsUnmeasured > 0) {
    html += paragraph(fmt::format("Searched without sequence parallelism and ZeRO (the distributed optimizer): {} of "
                                  "the fitting choices need all_gather and reduce_scatter, which the file did not "
                                  "measure.",
                                  a.optionsUnmeasured));
  }
  if (c.framework == Framework::kVllm) {
    html += servingTable(c, a);
  } else if (!a.best.empty()) {
    html += trainingTable(a);
  }
  if (a.unpricedLayouts > 0) html += unpricedSection(a);
  for (const std::string& more : a.toPriceMore) html += paragraph("To price more: " + more);
  if (!a.best.empty()) {
    html += fmt::format("<h3>{} options for #1</h3><pre>{}</pre>\n", frameworkName(c.framework),
                        htmlEscape(a.best.front().flags));
  }
  if (a.storage) {
    html += "<h3>Storage feed</h3>\n";
    for (const std::string& s : storageSentences(c, *a.storage)) html += paragraph(s);
  }
  return html;
}

}  // namespace fabricmap::orchestrator
