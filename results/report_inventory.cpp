// The report's inventory section (see report.h): each node's hardware as /inventory records it,
// one row per node, the cells that a finding names (nic_down, pcie_downtrained, ...) marked with
// its severity. It formats; the judging was the analysis's.
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/units.h"
#include "results/inventory_text.h"
#include "results/report.h"

namespace fabricmap::results {
namespace {

// The worst severity of the findings of `kinds` on `node` (kInfo when none: no mark).
core::Severity worstAt(const ResultsFile& f, int node, std::initializer_list<core::FindingKind> kinds) {
  core::Severity worst = core::Severity::kInfo;
  for (const core::Finding& x : f.findings) {
    if (x.nodeA == node && std::find(kinds.begin(), kinds.end(), x.kind) != kinds.end()) worst = std::min(worst, x.severity);
  }
  return worst;
}

std::string cell(const std::string& text, core::Severity mark) {
  if (mark == core::Severity::kInfo) return "<td>" + text + "</td>";
  return fmt::format("<td class=\"sev-{}\">{}</td>", core::name(mark), text);
}

}  // namespace

std::string renderInventory(const ResultsFile& f) {
  const core::InventoryRows& inv = f.topology.inventory;
  if (inv.nodes.empty()) return {};
  using K = core::FindingKind;
  std::string out = "<section id=\"inventory\"><h2>Inventory</h2>\n<p class=\"note\">Each node's hardware as its sysfs "
                    "said at the start of the run (/inventory); cells a finding names are marked.</p>\n";
  const bool fold = inv.nodes.size() > 32;
  out += fold ? fmt::format("<details><summary>all {} nodes</summary>", inv.nodes.size()) : "";
  out += "<table><tr><th>node</th><th>NICs</th><th>PCIe links</th><th>GPU memory</th><th>GPUDirect</th>"
         "<th>binding</th><th>error counters</th><th>notes</th></tr>\n";
  for (const core::NodeInventoryRecord& n : inv.nodes) {
    const auto named = std::find_if(f.topology.nodes.begin(), f.topology.nodes.end(),
                                    [&](const core::NodeRecord& r) { return r.node == n.node; });
    out += fmt::format("<tr><td>{}</td>", htmlEscape(named == f.topology.nodes.end() ? std::to_string(n.node) : named->name));
    out += cell(htmlEscape(nicsSummary(f.topology, n.node)), worstAt(f, n.node, {K::kNicDown, K::kNicRateMismatch, K::kBelowLineRate}));
    out += cell(htmlEscape(pcieSummary(f.topology, n.node)), worstAt(f, n.node, {K::kPcieDowntrained}));
    out += cell(htmlEscape(gpuMemorySummary(f.topology, n.node)), worstAt(f, n.node, {K::kGpuMemory}));
    out += cell(htmlEscape(n.gpuDirect + (n.gpuDirectHow.empty() ? "" : ": " + n.gpuDirectHow)),
                worstAt(f, n.node, {K::kNoGpuDirect}));
    out += cell(htmlEscape(bindingSummary(f.topology, n.node)), worstAt(f, n.node, {K::kBinding}));
    out += cell(htmlEscape(countersSummary(f.topology, n.node)), worstAt(f, n.node, {K::kLinkErrors}));
    out += "<td>" + htmlEscape(n.notes) + "</td></tr>\n";
  }
  out += fold ? "</table></details>\n" : "</table>\n";
  return out + "</section>\n";
}

}  // namespace fabricmap::results
