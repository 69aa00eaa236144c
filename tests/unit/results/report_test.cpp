// HTML report: self-contained, hostile text escaped, every section there, and a 512-node run
// still a small page.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "results/report.h"

namespace fabricmap::results {
namespace {

// `nodes` nodes of `perNode` ranks; what each part of a run would leave in the file is added by
// the helpers below.
ResultsFile topologyOnly(int nodes, int perNode) {
  ResultsFile f;
  f.path = "/data/run.h5";
  f.complete = true;
  f.provenance.toolVersion = "0.9.0";
  f.provenance.backend = "mpi";
  f.provenance.createdUtc = "2026-12-03T01:00:00Z";
  f.provenance.commandLine = "fabricmap run -o run.h5";
  f.provenance.worldSize = nodes * perNode;
  f.provenance.nodeCount = nodes;
  for (int n = 0; n < nodes; ++n) {
    core::NodeRecord node;
    node.node = n;
    node.hostname = fmt::format("gpu-{:03}", n);
    node.name = node.hostname;
    node.ranks = node.gpus = perNode;
    node.topologyClass = "FULL_NVSWITCH";
    for (int g = 0; g < perNode * perNode; ++g) node.gpuLinks.emplace_back(g % (perNode + 1) == 0 ? "X" : "NV18");
    f.topology.nodes.push_back(node);
    for (int l = 0; l < perNode; ++l) {
      core::RankRecord r;
      r.rank = n * perNode + l;
      r.node = n;
      r.localRank = l;
      r.hostname = node.hostname;
      f.topology.ranks.push_back(r);
    }
  }
  return f;
}

void addCollectives(ResultsFile& f) {
  f.scopes.push_back({"world", 1, "0-1", "active", ""});
  int step = 0;
  for (const bool inPlace : {false, true}) {
    for (std::uint64_t bytes = 8; bytes <= (std::uint64_t{1} << 30); bytes *= 8) {
      core::CollectiveRecord r;
      r.step = step++;
      r.scope = "world";
      r.op = "all_reduce";
      r.dtype = "float";
      r.redop = "sum";
      r.nranks = 2;
      r.inPlace = inPlace;
      r.bytes = bytes;
      r.timeUs.mean = r.timeUs.median = 5 + static_cast<double>(bytes) / 1e4;
      r.algbw = static_cast<double>(bytes) / r.timeUs.mean / 1e3;
      r.busbw = r.algbw;
      f.collectives.push_back(r);
    }
  }
}

// Pairwise matrices: every rank pair measured, `slow` node's links at a tenth.
void addPairwise(ResultsFile& f, int slowNode = -1) {
  const int n = f.provenance.worldSize;
  const int nodes = f.provenance.nodeCount;
  const int perNode = n / nodes;
  core::Matrices& m = f.matrices;
  f.hasMatrices = true;
  m.pairsMeasured = true;
  m.mode = "full";
  m.bytes = 1 << 20;
  m.rankUnidir = core::nanMatrix(n);
  m.rankLatency = core::nanMatrix(n);
  m.rankLinkClass.n = n;
  m.rankLinkClass.table.assign(static_cast<std::size_t>(n) * static_cast<std::size_t>(n), core::LinkClass::kInterNode);
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      const bool same = a / perNode == b / perNode;
      m.rankLinkClass.table[m.rankUnidir.index(a, b)] = a == b ? core::LinkClass::kSelf
                                                  : same ? core::LinkClass::kNvswitch
                                                         : core::LinkClass::kInterNode;
      if (a == b) continue;
      const bool slow = a / perNode == slowNode || b / perNode == slowNode;
      m.rankUnidir.at(a, b) = (same ? 300.0f : 45.0f) * (slow ? 0.1f : 1.0f);
      m.rankLatency.at(a, b) = same ? 2.0f : 4.0f;
    }
  }
  m.classExpected[static_cast<std::size_t>(core::LinkClass::kNvswitch)].bandwidth = 300;
  m.classExpected[static_cast<std::size_t>(core::LinkClass::kInterNode)].bandwidth = 45;
  m.nodeBw = core::nanMatrix(nodes);
  m.nodeLatency = core::nanMatrix(nodes);
  m.nodeExpected.latency = 4;
  m.nodeMeasured = true;
  for (int a = 0; a < nodes; ++a) {
    for (int b = 0; b < nodes; ++b) {
      if (a != b) m.nodeBw.at(a, b) = a == slowNode || b == slowNode ? 40.0f : 360.0f;
      if (a != b) m.nodeLatency.at(a, b) = a == slowNode || b == slowNode ? 40.0f : 4.0f;
    }
  }
  if (slowNode >= 0) {
    core::Finding x;
    x.severity = core::Severity::kError;
    x.kind = core::FindingKind::kNode;
    x.subject = fmt::format("node{}", slowNode);
    x.measured = 40;
    x.expected = 360;
    x.ratio = 40.0 / 360;
    x.unit = "GB/s";
    x.message = fmt::format("node{} is slow: check its NIC", slowNode);
    x.nodeA = slowNode;
    f.findings.push_back(x);
  }
}

void addPatterns(ResultsFile& f) {
  f.layout = "tp=2,pp=1,dp=2,ep=1";
  for (const char* mode : {"isolated", "concurrent"}) {
    for (const char* traffic : {"tp", "dp"}) {
      core::TrainingRecord r;
      r.mode = mode;
      r.traffic = traffic;
      r.ops = "all_reduce";
      r.groups = 2;
      r.nranks = 2;
      r.bytes = 1 << 20;
      r.messages = 4;
      r.iters = 5;
      r.timeUs.median = 100;
      r.algbw = 42;
      r.busbw = 42;
      if (std::string(mode) == "concurrent") r.interference = 1.25;
      f.training.push_back(r);
    }
  }
  for (const int n : {1, 2}) {
    core::ScalingRecord r;
    r.level = "nodes";
    r.n = n;
    r.groups = 1;
    r.nranks = 2 * n;
    r.op = "all_reduce";
    r.bytes = 1 << 24;
    r.busbw = n == 1 ? 100 : 61;
    r.efficiency = n == 1 ? 1.0 : 0.61;
    f.scaling.push_back(r);
  }
}

// FABRICMAP_TEST_REPORT_DIR=DIR keeps the synthetic pages there, to look at them in a browser.
void keep(const std::string& html, const std::string& name) {
  if (const char* dir = std::getenv("FABRICMAP_TEST_REPORT_DIR")) std::ofstream(std::string(dir) + "/" + name) << html;
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

void expectSelfContained(const std::string& html) {
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("src=\""), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("</html>"), std::string::npos);
}

TEST(Report, EscapesEveryCharacterHtmlCares) {
  EXPECT_EQ(htmlEscape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(htmlEscape("node\x01x"), "node\xEF\xBF\xBDx");
  EXPECT_EQ(htmlEscape("caf\xC3\xA9"), "caf\xC3\xA9");               // valid UTF-8 kept
  EXPECT_EQ(htmlEscape("\xC3"), "\xEF\xBF\xBD");                      // truncated sequence
  EXPECT_EQ(htmlEscape("\xC0\xBC"), "\xEF\xBF\xBD\xEF\xBF\xBD");      // overlong '<'
  EXPECT_EQ(htmlEscape("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
  EXPECT_EQ(htmlEscape(std::string("a\0b", 3)), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(htmlEscape("line\nnext"), "line\nnext");
}

TEST(Report, EverySectionOfAFullRunVerdictFirst) {
  ResultsFile f = topologyOnly(2, 2);
  addCollectives(f);
  addPairwise(f, 1);
  addPatterns(f);
  core::Finding w;
  w.severity = core::Severity::kWarning;
  w.kind = core::FindingKind::kScaling;
  w.subject = "nodes n=2";
  w.message = "scaling drops";
  f.findings.push_back(w);
  core::Finding l;
  l.severity = core::Severity::kError;
  l.kind = core::FindingKind::kLinkLatency;
  l.subject = "gpu-000 <-> gpu-001";
  l.nodeA = 0;
  l.nodeB = 1;
  l.message = "latency 40 us";
  f.findings.push_back(l);
  const std::string html = renderReport(f);
  expectSelfContained(html);
  const auto verdict = html.find("2 errors, 1 warning");
  ASSERT_NE(verdict, std::string::npos);
  for (const char* id : {"id=\"heatmaps\"", "id=\"curves\"", "id=\"topology\"", "id=\"patterns\"", "id=\"provenance\""}) {
    const auto at = html.find(id);
    ASSERT_NE(at, std::string::npos) << id;
    EXPECT_LT(verdict, at) << id;
  }
  EXPECT_NE(html.find("Node x node bandwidth"), std::string::npos);
  EXPECT_NE(html.find("Rank x rank bandwidth"), std::string::npos);
  EXPECT_NE(html.find("node1 is slow: check its NIC"), std::string::npos);
  // the slow node's cells are outlined, and hovering a cell tells its figures
  EXPECT_NE(html.find("class=\"se\""), std::string::npos);
  EXPECT_NE(html.find("<title>gpu-000 \u2192 gpu-001: 40.0 GB/s"), std::string::npos);
  EXPECT_NE(html.find("nvswitch 300 GB/s"), std::string::npos);  // the class legend
  // the node latency map: the pair a latency finding names is outlined red, its hover says why
  EXPECT_NE(html.find("Node x node latency, us (2 nodes)"), std::string::npos);
  EXPECT_NE(html.find("<title>gpu-000 \u2192 gpu-001: 40.00 us, baseline 4.00 us (10.00x) - HIGH"), std::string::npos);
  // curves: log-scale ticks from 8 B to 1 GiB, in-place dashed
  EXPECT_NE(html.find(">8 B</text>"), std::string::npos);
  EXPECT_NE(html.find(">128 MiB</text>"), std::string::npos);
  EXPECT_NE(html.find("stroke-dasharray"), std::string::npos);
  EXPECT_NE(html.find("FULL_NVSWITCH"), std::string::npos);
  EXPECT_NE(html.find("tp=2,pp=1,dp=2,ep=1"), std::string::npos);
  EXPECT_NE(html.find(">1.25<"), std::string::npos);  // interference
  EXPECT_NE(html.find(">0.61<"), std::string::npos);  // scaling efficiency
  EXPECT_NE(html.find("fabricmap run -o run.h5"), std::string::npos);
}

// A section the caller formatted (the advice): after the measured sections, before provenance,
// linked from the navigation; its id and title escaped, its body as given.
TEST(Report, ExtraSectionsBeforeProvenanceLinkedFromTheNavigation) {
  ResultsFile f = topologyOnly(2, 2);
  addPatterns(f);
  EXPECT_EQ(renderReport(f).find("id=\"advice\""), std::string::npos);
  const std::string html = renderReport(f, {{"advice", "Advice: <model>", "<table><tr><td>t8</td></tr></table>"}});
  expectSelfContained(html);
  const auto section = html.find("<section id=\"advice\"><h2>Advice: &lt;model&gt;</h2>\n<table><tr><td>t8</td>");
  ASSERT_NE(section, std::string::npos) << html;
  EXPECT_LT(html.find("id=\"patterns\""), section);
  EXPECT_LT(section, html.find("id=\"provenance\""));
  EXPECT_NE(html.find("<a href=\"#advice\">Advice: &lt;model&gt;</a><a href=\"#provenance\">"), std::string::npos);
}

// The inventory section: a row per node, the cells its findings name marked with their severity.
TEST(Report, TheInventoryPerNodeWithWhatItsFindingsName) {
  ResultsFile f = topologyOnly(2, 2);
  EXPECT_EQ(renderReport(f).find("id=\"inventory\""), std::string::npos);  // a file without /inventory
  for (int n = 0; n < 2; ++n) {
    for (int d = 0; d < 2; ++d) {
      const bool slow = n == 1 && d == 1;
      f.topology.inventory.nics.push_back({n, fmt::format("mlx5_{}", d), 1, "rdma", "ACTIVE", "LinkUp",
                                           slow ? 200.0 : 400.0, 4, slow ? "HDR" : "NDR", "IB", "", "", 0});
    }
    f.topology.inventory.pcie.push_back({n, "GPU", "0000:18:00.0", true, 32, 32, 16, 16, 32, 16, 0, "0-55"});
    f.topology.inventory.nodes.push_back({n, 2, "yes", "nvidia_peermem loaded", ""});
    f.topology.inventory.counters.push_back({n, "mlx5_0", 1, "symbol_error", 3, n == 0 ? 3u : 12u});
  }
  f.topology.inventory.nics.push_back({0, "mlx5_2", 1, "rdma", "DOWN", "Disabled", 400, 4, "NDR", "IB", "", "", 0});
  // node 1's GPUs as NVML saw them: one with ECC off and a remap waiting for a reset
  for (int g = 0; g < 2; ++g) {
    f.topology.inventory.gpus.push_back({1, g, "", "NVIDIA H100 80GB HBM3", 85899345920ull, 0, "", "", g == 0 ? "yes" : "no",
                                         "yes", -1, -1, "unknown", 0, g == 0 ? 0 : 2, g == 0 ? "no" : "yes", "no"});
  }
  // node 0's ranks: one bound away from its GPU (a binding warning marks the cell)
  f.topology.ranks[0].nearGpu = "no";
  f.topology.ranks[1].nearGpu = f.topology.ranks[1].nearNic = "yes";
  core::Finding away;
  away.kind = core::FindingKind::kBinding;
  away.severity = core::Severity::kWarning;
  away.nodeA = 0;
  f.findings.push_back(away);
  core::Finding down;
  down.kind = core::FindingKind::kNicDown;
  down.severity = core::Severity::kError;
  down.nodeA = 0;
  f.findings.push_back(down);
  core::Finding grew = down;
  grew.kind = core::FindingKind::kLinkErrors;
  grew.severity = core::Severity::kWarning;
  grew.nodeA = 1;
  f.findings.push_back(grew);
  const std::string html = renderReport(f);
  expectSelfContained(html);
  const auto at = html.find("id=\"inventory\"");
  ASSERT_NE(at, std::string::npos);
  const std::string section = html.substr(at, html.find("</section>", at) - at);
  EXPECT_NE(section.find("<td class=\"sev-error\">2x 400 Gb/s IB (NDR); mlx5_2 port 1 DOWN</td>"), std::string::npos)
      << section;
  EXPECT_NE(section.find("<td>1x 200 Gb/s IB (HDR), 1x 400 Gb/s IB (NDR)</td>"), std::string::npos) << section;
  EXPECT_NE(section.find("<td class=\"sev-warning\">+9 (1 counters)</td>"), std::string::npos) << section;
  EXPECT_NE(section.find("<td>+0 (1 counters)</td>"), std::string::npos) << section;
  EXPECT_NE(section.find("yes: nvidia_peermem loaded"), std::string::npos);
  EXPECT_NE(section.find("<td class=\"sev-warning\">rank 0 away from their GPU; 1 near their GPU</td>"),
            std::string::npos)
      << section;
  EXPECT_NE(section.find("<td>-</td>"), std::string::npos) << section;  // node 1's binding unknown
  EXPECT_NE(section.find("<td>2x 80 GiB NVIDIA H100 80GB HBM3; ECC off on 1 of 2; 2 rows remapped; GPU 1: remap "
                         "pending</td>"),
            std::string::npos)
      << section;
  EXPECT_NE(html.find("<a href=\"#inventory\">"), std::string::npos);
}

// One rank corrupting every all_reduce is one verdict row with its 36 findings folded under it,
// above the slow node; each row shows its count, worst figure and confidence.
TEST(Report, FindingsAreOneRowPerCulprit) {
  ResultsFile f = topologyOnly(2, 4);
  addPairwise(f, 1);
  f.findings[0].confidence = 0.87;  // the slow node
  for (int i = 0; i < 36; ++i) {
    core::Finding x;
    x.severity = core::Severity::kError;
    x.kind = core::FindingKind::kDataCorruption;
    x.subject = i < 34 ? "rank 5 (gpu-001)" : "rank 5 <-> rank 2 (gpu-001, gpu-000)";
    x.measured = i == 20 ? 17 : 1;
    x.unit = "elements";
    x.message = fmt::format("all_reduce step {}: wrong elements", i);
    f.findings.push_back(x);
  }
  core::Finding note;
  note.severity = core::Severity::kInfo;
  note.kind = core::FindingKind::kOversubscribed;
  note.subject = "gpu-000";
  note.confidence = 1;
  note.message = "gpu-000 runs 4 ranks on 2 CPUs";
  f.findings.push_back(note);
  const std::string html = renderReport(f);
  keep(html, "report-culprits.html");
  expectSelfContained(html);
  EXPECT_NE(html.find("2 errors, 0 warnings, 1 note (from 38 findings)"), std::string::npos);
  EXPECT_EQ(occurrences(html, "<td>data_corruption</td>"), 1u);
  const auto corrupt = html.find("<tr><td class=\"sev-error\">error</td><td>data_corruption</td><td>rank 5 (gpu-001)</td>"
                                 "<td class=\"n\">36</td><td class=\"n\">17 elements</td><td class=\"n\">-</td>"
                                 "<td class=\"n\">-</td><td class=\"n\">1.00</td><td><details><summary>36 findings; "
                                 "worst: all_reduce step 20: wrong elements</summary>");
  ASSERT_NE(corrupt, std::string::npos) << html.substr(html.find("id=\"verdict\""), 3000);
  const auto node = html.find("<td>node</td><td>node1</td><td class=\"n\">1</td><td class=\"n\">40 GB/s</td>"
                              "<td class=\"n\">360 GB/s</td><td class=\"n\">0.11x</td><td class=\"n\">0.87</td>"
                              "<td>node1 is slow: check its NIC</td>");
  ASSERT_NE(node, std::string::npos);
  EXPECT_LT(corrupt, node);  // most severe first: wrong data before a slow node
  const auto folded = html.substr(corrupt, html.find("</details>", corrupt) - corrupt);
  EXPECT_EQ(occurrences(folded, "<tr><td class=\"n\">"), 36u);  // every finding in the fold
  EXPECT_EQ(occurrences(folded, "wrong elements</td></tr>"), 36u);
  EXPECT_NE(html.find("<td class=\"sev-info\">info</td><td>oversubscribed</td><td>gpu-000</td><td class=\"n\">1</td>"),
            std::string::npos);
}

TEST(Report, HostileTextFromTheFileIsEscapedEverywhere) {
  ResultsFile f = topologyOnly(2, 2);
  const std::string evil = "<script>alert(1)</script>\"><img src=x onerror=alert(2)>";
  f.path = "/tmp/" + evil + ".h5";
  f.topology.nodes[0].name = evil;
  f.topology.nodes[0].nics = evil;
  f.topology.nodes[1].topologyClass = evil;
  f.topology.nodes[1].gpuLinks[1] = evil;
  f.topology.ranks[0].hostname = evil;
  f.provenance.commandLine = evil;
  f.provenance.runConfig = evil + "\xFF\xFE";
  addCollectives(f);
  f.collectives[0].op = evil;
  f.scopes[0].members = evil;
  addPairwise(f);
  f.matrices.classExpectedFrom[static_cast<std::size_t>(core::LinkClass::kInterNode)] = evil;
  addPatterns(f);
  f.training[0].ops = evil;
  f.scaling[0].level = evil;
  f.topology.inventory.nics.push_back({0, evil, 1, "rdma", evil, evil, 400, 4, evil, evil, evil, evil, 0});
  f.topology.inventory.pcie.push_back({0, evil, evil, true, 16, 32, 8, 16, 32, 16, 0, evil});
  f.topology.inventory.nodes.push_back({0, 8, evil, evil, evil});
  f.topology.inventory.gpus.push_back({0, 0, evil, evil, 1, 0, evil, evil, evil, evil, 0, 0, evil, 0, 0, evil, evil});
  core::Finding x;
  x.subject = evil;
  x.unit = evil;
  x.message = evil;
  x.measured = 1;
  x.expected = 2;
  f.findings.push_back(x);
  const std::string html = renderReport(f);
  keep(html, "report-hostile.html");
  expectSelfContained(html);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("\xFF"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img"), std::string::npos);
}

// What a damaged or hostile file may hold (the readers keep what they can): NaN figures, an
// unknown link class, a GPU link matrix that is not square, copy matrices that disagree with
// their rank list. The page is still whole.
TEST(Report, DamagedFiguresStillRender) {
  ResultsFile f = topologyOnly(2, 2);
  addCollectives(f);
  f.collectives[1].busbw = std::nan("");
  f.collectives[2].timeUs.mean = std::numeric_limits<double>::infinity();
  addPairwise(f);
  f.matrices.rankLinkClass.table[1] = static_cast<core::LinkClass>(200);
  f.topology.nodes[0].gpuLinks.pop_back();
  core::CopyMatrices copies;
  copies.node = 0;
  copies.ranks = {0, 1, 2};
  copies.gpus = {0};
  copies.methods.push_back({"ce", core::nanMatrix(2), {}, {}, {}});
  f.matrices.copies.push_back(copies);
  const std::string html = renderReport(f);
  keep(html, "report-damaged.html");
  expectSelfContained(html);
  // no figure printed as nan or inf, in text or in coordinates
  for (const char* bad : {">nan", ">-nan", "\"nan", ",nan", "nan,", ">inf", "\"inf", ",inf", " inf "}) {
    EXPECT_EQ(html.find(bad), std::string::npos) << bad;
  }
  EXPECT_NE(html.find("id=\"provenance\""), std::string::npos);
}

TEST(Report, OnlyCollectives) {
  ResultsFile f = topologyOnly(1, 2);
  addCollectives(f);
  const std::string html = renderReport(f);
  expectSelfContained(html);
  EXPECT_NE(html.find("0 errors, 0 warnings"), std::string::npos);
  EXPECT_NE(html.find("Pairwise bandwidth was not measured"), std::string::npos);
  EXPECT_NE(html.find("all_reduce"), std::string::npos);
  EXPECT_NE(html.find("peak busbw"), std::string::npos);
  EXPECT_EQ(html.find("Rank x rank bandwidth"), std::string::npos);
  EXPECT_EQ(html.find("id=\"patterns\""), std::string::npos);
}

TEST(Report, OnlyPairwise) {
  ResultsFile f = topologyOnly(2, 1);
  addPairwise(f);
  // a pair measured again whose samples disagree is noisy, as the analysis sees it: not slow
  f.matrices.rankUnidirWorst = f.matrices.rankUnidir;
  f.matrices.rankUnidirWorst.at(0, 1) /= 3;
  const std::string html = renderReport(f);
  expectSelfContained(html);
  EXPECT_NE(html.find("No collective sweep in this run"), std::string::npos);
  EXPECT_NE(html.find("Node x node bandwidth"), std::string::npos);
  // nothing slow: the outlines are only the legends' keys of the two heatmaps
  EXPECT_EQ(occurrences(html, "class=\"se\""), 2u);
  EXPECT_EQ(occurrences(html, "class=\"sw\""), 2u);
  EXPECT_EQ(occurrences(html, "class=\"sn\""), 3u);  // the legends' keys and the noisy pair
  EXPECT_NE(html.find("45.0 GB/s (worst sample 15.0)"), std::string::npos);
  EXPECT_NE(html.find("noisy: samples on both sides of the bar"), std::string::npos);
  // samples all below the bar are slow, however much they differ (a throttled link is erratic)
  f.matrices.rankUnidir.at(1, 0) = 4;
  f.matrices.rankUnidirWorst.at(1, 0) = 1;
  const std::string slow = renderReport(f);
  EXPECT_EQ(occurrences(slow, "class=\"sn\""), 3u);
  EXPECT_GT(occurrences(slow, "class=\"se\""), 2u);
}

TEST(Report, TrainingAndScalingWithoutMatrices) {
  ResultsFile f = topologyOnly(2, 2);
  addPatterns(f);
  f.complete = false;
  f.provenance.plannedSteps = 9;
  const std::string html = renderReport(f);
  expectSelfContained(html);
  EXPECT_NE(html.find("INCOMPLETE"), std::string::npos);
  EXPECT_NE(html.find("Training traffic, layout"), std::string::npos);
  EXPECT_NE(html.find("<h3>Scaling</h3>"), std::string::npos);
  EXPECT_NE(html.find("No pairwise or copy matrices"), std::string::npos);
}

TEST(Report, TwoRanksIsASmallPage) {
  ResultsFile f = topologyOnly(1, 2);
  addCollectives(f);
  addPairwise(f);
  const std::string html = renderReport(f);
  expectSelfContained(html);
  std::printf("2 ranks: %zu bytes\n", html.size());
  keep(html, "report-2-ranks.html");
  EXPECT_LT(html.size(), 100u * 1024u) << html.size();
}

// 512 nodes of 8: the matrices are binned, the node table folded; the page stays small and still
// names the slow node.
TEST(Report, FiveHundredTwelveNodesStaySmall) {
  ResultsFile f = topologyOnly(512, 8);
  addCollectives(f);
  addPairwise(f, 300);
  addPatterns(f);
  const std::string html = renderReport(f);
  expectSelfContained(html);
  std::printf("512 nodes x 8 ranks: %zu bytes\n", html.size());
  keep(html, "report-512-nodes.html");
  EXPECT_LT(html.size(), 1024u * 1024u) << html.size();
  EXPECT_NE(html.find("Binned: 8 nodes per row and column"), std::string::npos);
  EXPECT_NE(html.find("Binned: 128 ranks per row and column"), std::string::npos);
  EXPECT_NE(html.find("nodes 296-303 \u2192 0-7: min 40.0"), std::string::npos);
  EXPECT_NE(html.find("Binned: 16 nodes per row and column, each cell the highest latency"), std::string::npos);
  EXPECT_NE(html.find("nodes 288-303 \u2192 0-15: min 4.00, median 4.00, max 40.00 us, 256 pairs"), std::string::npos);
  EXPECT_NE(html.find("class=\"se\""), std::string::npos);
  EXPECT_NE(html.find("<details><summary>all 512 nodes</summary>"), std::string::npos);
  EXPECT_NE(html.find("GPU links of 512 nodes"), std::string::npos);
}

}  // namespace
}  // namespace fabricmap::results
