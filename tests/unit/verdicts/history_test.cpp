// `history`: real results files written by the HDF5 sink into a temporary directory and read back
// by the light reader; per node and pair, counts, order, blame status, sparklines; the baseline's
// median and spread, and verify/compare against it; bad inputs skipped, none readable refused.
#include "orchestrator/verdicts/history.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "orchestrator/commands.h"
#include "orchestrator/verdicts/compare.h"
#include "orchestrator/verdicts/verify.h"
#include "results/h5_reader.h"
#include "results/h5_writer.h"
#include "tests/unit/topologies/topo_support.h"

namespace fabricmap::orchestrator {
namespace {

namespace fs = std::filesystem;

using topologies::TempDir;

std::string in(const TempDir& dir, const std::string& name) { return (dir.path() / name).string(); }

// One run of nodes h0..h<n-1> (one rank each) as the sink writes it.
struct RunSpec {
  std::string created;
  int nodes = 4;
  float bw = 10;                                             // every node pair's cell
  std::vector<std::pair<std::pair<int, int>, float>> cells;  // cells set apart
  std::vector<core::Finding> findings;
  double interNode = 0;  // the class baseline the analysis judged inter_node against; 0: none
  std::vector<core::CollectiveRecord> rows;
  std::string host = "h";  // nodes are <host>0, <host>1, ...
  int firstNode = 0;       // numbered from this
  bool hostnames = false;  // the provenance names them (else history takes the node names)
};

RunSpec at(const std::string& created, float bw = 10, double interNode = 0) {
  RunSpec r;
  r.created = created;
  r.bw = bw;
  r.interNode = interNode;
  return r;
}

RunSpec blamedIn(const std::string& created, std::vector<core::Finding> findings) {
  RunSpec r = at(created);
  r.findings = std::move(findings);
  return r;
}

core::Finding blame(core::FindingKind kind, int a, int b = -1, core::Severity s = core::Severity::kWarning) {
  return core::Finding{s, kind, "node or pair", 0, 0, 0, "GB/s", "blamed", a, b};
}

core::CollectiveRecord row(const std::string& scope, int group, std::uint64_t bytes, double busbw) {
  core::CollectiveRecord r;
  r.scope = scope;
  r.group = group;
  r.op = "all_reduce";
  r.dtype = "float";
  r.redop = "sum";
  r.bytes = bytes;
  r.busbw = busbw;
  r.checked = true;
  return r;
}

core::Topology topologyOf(int nodes, const std::string& host = "h", int first = 0) {
  core::Topology t;
  for (int n = 0; n < nodes; ++n) {
    core::RankRecord r;
    r.rank = n;
    r.node = n;
    r.hostname = fmt::format("{}{}", host, first + n);
    t.ranks.push_back(r);
    core::NodeRecord node;
    node.node = n;
    node.name = r.hostname;
    node.hostname = r.hostname;
    node.ranks = 1;
    t.nodes.push_back(node);
  }
  return t;
}

core::Matrices matricesOf(const RunSpec& run) {
  core::Matrices m;
  m.pairsMeasured = true;
  m.rankUnidir = core::nanMatrix(run.nodes);
  m.rankBidir = core::nanMatrix(run.nodes);
  m.rankLatency = core::nanMatrix(run.nodes);
  m.rankPeerMedian.assign(static_cast<std::size_t>(run.nodes), run.bw);
  m.nodeBw = core::nanMatrix(run.nodes);
  m.nodeLatency = core::nanMatrix(run.nodes);
  for (int a = 0; a < run.nodes; ++a) {
    for (int b = 0; b < run.nodes; ++b) {
      if (a != b) m.nodeBw.at(a, b) = m.rankUnidir.at(a, b) = run.bw;
    }
  }
  for (const auto& [cell, v] : run.cells) m.nodeBw.at(cell.first, cell.second) = v;
  for (auto& e : m.classExpected) e.bandwidth = std::nan("");
  m.nodeExpected.bandwidth = run.bw;
  if (run.interNode > 0)
    m.classExpected[static_cast<std::size_t>(core::LinkClass::kInterNode)].bandwidth = run.interNode;
  return m;
}

std::string write(const TempDir& dir, const std::string& name, const RunSpec& run) {
  const std::string path = in(dir, name);
  core::Provenance p;
  p.createdUtc = run.created;
  p.backend = "mpi";
  p.worldSize = run.nodes;
  p.nodeCount = run.nodes;
  const core::Topology topology = topologyOf(run.nodes, run.host, run.firstNode);
  if (run.hostnames) {
    std::vector<std::string> names;
    for (const core::NodeRecord& n : topology.nodes) names.push_back(n.hostname);
    p.hostnames = fmt::format("{}", fmt::join(names, ","));
  }
  results::H5Sink sink(path);
  sink.begin(p, topology, {});
  if (!run.rows.empty()) {
    core::StepRecord s;
    s.kind = core::StepKind::kCollective;
    s.status = "ok";
    sink.step(s, std::vector<core::CollectiveRecord>(run.rows));
  }
  sink.analysis(matricesOf(run), run.findings);
  sink.finish(true);
  return path;
}

std::vector<results::RunDigest> readAll(const std::vector<std::string>& paths) {
  std::vector<results::RunDigest> out;
  for (const std::string& p : paths) out.push_back(results::readRunDigest(p, true));
  return out;
}

const SubjectHistory& subject(const std::vector<SubjectHistory>& all, const std::string& a, const std::string& b = "") {
  const auto it = std::find_if(all.begin(), all.end(), [&](const SubjectHistory& s) { return s.a == a && s.b == b; });
  if (it == all.end()) throw std::runtime_error("no subject " + a + " " + b);
  return *it;
}

TEST(History, CountsAndFirstLastSeenInCreatedOrder) {
  TempDir dir;
  // file names in the opposite order of their runs: the created time orders them
  RunSpec early = at("2026-01-01T00:00:00Z", 10);
  RunSpec middle = at("2026-01-02T00:00:00Z", 20);
  RunSpec late = at("2026-01-03T00:00:00Z", 30);
  early.nodes = late.nodes = 3;
  const auto runs = readAll({write(dir, "c.h5", early), write(dir, "b.h5", middle), write(dir, "a.h5", late)});
  const History h = buildHistory(runs, {});
  ASSERT_EQ(h.runs.size(), 3u);
  EXPECT_EQ(h.runs[0].path, in(dir, "c.h5"));
  EXPECT_EQ(h.runs[2].path, in(dir, "a.h5"));
  ASSERT_EQ(h.nodes.size(), 4u);
  const SubjectHistory& h0 = subject(h.nodes, "h0");
  EXPECT_EQ(h0.runs.size(), 3u);
  EXPECT_EQ(h0.measured, 3);
  EXPECT_EQ(h0.firstSeen, early.created);
  EXPECT_EQ(h0.lastSeen, late.created);
  EXPECT_EQ(h0.bandwidths(), (std::vector<double>{10, 20, 30}));
  const SubjectHistory& h3 = subject(h.nodes, "h3");  // only in the middle run
  EXPECT_EQ(h3.runs.size(), 1u);
  EXPECT_EQ(h3.firstSeen, middle.created);
  EXPECT_EQ(h3.lastSeen, middle.created);
  EXPECT_FALSE(h3.trend.has_value());
  EXPECT_TRUE(h.pairs.empty());
}

TEST(History, FlappingAlwaysNewlyAndNeverBlamed) {
  TempDir dir;
  const auto node = [](int n, core::Severity s = core::Severity::kWarning) {
    return blame(core::FindingKind::kNode, n, -1, s);
  };
  const core::Finding context = node(0, core::Severity::kInfo);  // information blames nobody
  std::vector<RunSpec> runs{
      blamedIn("2026-02-01T00:00:00Z", {context, node(2)}),
      blamedIn("2026-02-02T00:00:00Z", {context, node(2), node(1, core::Severity::kError)}),
      blamedIn("2026-02-03T00:00:00Z", {context, node(2), blame(core::FindingKind::kLink, 2, 3)}),
      blamedIn("2026-02-04T00:00:00Z", {context, node(2), node(3)}),
  };
  std::vector<std::string> paths;
  for (std::size_t i = 0; i < runs.size(); ++i) paths.push_back(write(dir, fmt::format("r{}.h5", i), runs[i]));
  const History h = buildHistory(readAll(paths), {});
  EXPECT_EQ(subject(h.nodes, "h0").status, SubjectStatus::kClean);
  EXPECT_EQ(subject(h.nodes, "h0").blamed, 0);
  EXPECT_EQ(subject(h.nodes, "h1").status, SubjectStatus::kFlapping);  // blamed in run 1, clean after
  EXPECT_EQ(subject(h.nodes, "h1").blamed, 1);
  EXPECT_EQ(subject(h.nodes, "h2").status, SubjectStatus::kBlamed);
  EXPECT_EQ(subject(h.nodes, "h2").blamed, 4);
  EXPECT_EQ(subject(h.nodes, "h3").status, SubjectStatus::kNewlyBlamed);  // the link, then the node
  EXPECT_EQ(subject(h.nodes, "h3").blamed, 2);
  ASSERT_EQ(h.pairs.size(), 1u);  // only pairs blamed in some run
  const SubjectHistory& pair = h.pairs.front();
  EXPECT_EQ(pair.label(), "h2 <-> h3");
  EXPECT_EQ(pair.runs.size(), 4u);
  EXPECT_EQ(pair.blamed, 1);
  EXPECT_EQ(pair.status, SubjectStatus::kFlapping);
  EXPECT_EQ(h.runs[1].blames, 2);
  const auto json = historyToJson(h);
  EXPECT_EQ(json["nodes"][1]["node"], "h1");
  EXPECT_EQ(json["nodes"][1]["flapping"], true);
  EXPECT_EQ(json["pairs"][0]["series"][2]["blamed"], true);
  const std::string text = historyToText(h);
  EXPECT_NE(text.find("h2 <-> h3"), std::string::npos) << text;
  EXPECT_NE(text.find("flapping"), std::string::npos) << text;
}

TEST(History, BandwidthSparklineAndTrend) {
  TempDir dir;
  std::vector<std::string> paths;
  const float values[] = {10, 20, 30, 40};
  for (int i = 0; i < 4; ++i) {
    RunSpec r = at(fmt::format("2026-03-0{}T00:00:00Z", i + 1), values[i]);
    if (i == 3) r.cells = {{{2, 3}, 5.f}, {{3, 2}, 7.f}};  // h2 -> h3 slower than back
    if (i == 3) r.findings = {blame(core::FindingKind::kLink, 2, 3)};
    paths.push_back(write(dir, fmt::format("s{}.h5", i), r));
  }
  const History h = buildHistory(readAll(paths), {});
  const SubjectHistory& h0 = subject(h.nodes, "h0");
  EXPECT_EQ(sparkline(h0.bandwidths()), "▁▃▆█");  // (v - 10) / 30 x 7 rounded: 0, 2.3, 4.7, 7
  ASSERT_TRUE(h0.trend.has_value());
  EXPECT_DOUBLE_EQ(*h0.trend, 2.0);  // 40 / median(10, 20, 30)
  // h2 in the last run: median of its row (40, 40, 5) and column (40, 40, 7)
  EXPECT_DOUBLE_EQ(subject(h.nodes, "h2").bandwidths().back(), 40.0);
  const SubjectHistory& pair = subject(h.pairs, "h2", "h3");
  EXPECT_EQ(pair.bandwidths(), (std::vector<double>{10, 20, 30, 5}));  // the slower direction
  EXPECT_EQ(pair.status, SubjectStatus::kNewlyBlamed);
  EXPECT_EQ(sparkline({3, 3}), "▄▄");
  EXPECT_EQ(sparkline({}), "");
  const std::string html = historyToHtml(h);
  EXPECT_NE(html.find("<polyline"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http"), std::string::npos);
}

// Four runs: inter_node judged against 100, 110, 90, 130 GB/s; a world all_reduce of two groups
// in three of them; an intra one in two.
std::vector<std::string> baselineRuns(const TempDir& dir) {
  const double inter[] = {100, 110, 90, 130};
  std::vector<std::string> paths;
  for (int i = 0; i < 4; ++i) {
    RunSpec r = at(fmt::format("2026-04-0{}T00:00:00Z", i + 1), 10, inter[i]);
    if (i < 3) r.rows = {row("world", 0, 1 << 20, 8 + i), row("world", 1, 1 << 20, 12 + i)};
    if (i < 2) r.rows.push_back(row("intra", 0, 1 << 20, 50));
    r.rows.push_back(row("world", 0, 1 << 20, 0.1));
    r.rows.back().wrong = 5;  // wrong results are no figure
    paths.push_back(write(dir, fmt::format("b{}.h5", i), r));
  }
  return paths;
}

TEST(Baseline, MedianAndSpreadPerClassAndCollective) {
  TempDir dir;
  const Baseline b = buildBaseline(readAll(baselineRuns(dir)));
  EXPECT_EQ(b.runs, 4);
  EXPECT_EQ(b.firstUtc, "2026-04-01T00:00:00Z");
  const auto inter = std::find_if(b.classes.begin(), b.classes.end(),
                                  [](const ClassBaseline& c) { return c.population == "inter_node"; });
  ASSERT_NE(inter, b.classes.end());
  EXPECT_EQ(inter->figure.runs, 4);
  EXPECT_DOUBLE_EQ(inter->figure.median, 105);
  EXPECT_DOUBLE_EQ(inter->figure.spread, 1.4826 * 10);  // deviations 5, 5, 15, 25
  EXPECT_DOUBLE_EQ(inter->figure.bar(), 105 - 3 * 1.4826 * 10);
  ASSERT_EQ(b.collectives.size(), 2u);
  const CollectiveBaseline& world = b.collectives[1];
  EXPECT_EQ(world.key.scope, "world");
  EXPECT_EQ(world.figure.runs, 3);
  EXPECT_DOUBLE_EQ(world.figure.median, 11);  // per run the groups' median: 10, 11, 12
  EXPECT_EQ(b.collectives[0].figure.runs, 2);
  // the file round-trips; what is not a baseline is refused with one message
  const Baseline back = baselineFromJson(baselineToJson(b).dump(), "b.json");
  ASSERT_EQ(back.classes.size(), b.classes.size());
  EXPECT_DOUBLE_EQ(back.classes.front().figure.spread, b.classes.front().figure.spread);
  EXPECT_EQ(back.collectives[1].key, world.key);
  EXPECT_THROW(baselineFromJson("{\"kind\": \"fabricmap-baseline\", ", "x.json"), core::UsageError);
  EXPECT_THROW(baselineFromJson(R"({"runs": 3, "classes": [], "collectives": []})", "x.json"), core::UsageError);
  EXPECT_THROW(baselineFromJson(R"({"kind": "fabricmap-baseline", "version": 1, "runs": 3, "classes": [{}],
                                    "collectives": []})",
                                "x.json"),
               core::UsageError);
  EXPECT_THROW(readBaseline(in(dir, "absent.json")), core::UsageError);
  std::ofstream(in(dir, "huge.json")).close();
  std::filesystem::resize_file(in(dir, "huge.json"), (64u << 20) + 1);  // sparse
  try {
    readBaseline(in(dir, "huge.json"));
    ADD_FAILURE() << "a 64 MiB baseline was read";
  } catch (const core::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("is larger than 64 MiB"), std::string::npos) << e.what();
  }
}

TEST(Baseline, VerifyPassesWithinAndFailsBelowTheBar) {
  TempDir dir;
  const Baseline b = buildBaseline(readAll(baselineRuns(dir)));
  Profile none;
  none.name = "baseline";
  const auto judge = [&](double inter, double world) {
    RunSpec r = at("2026-05-01T00:00:00Z", 10, inter);
    r.rows = {row("world", 0, 1 << 20, world)};
    return verify(none, results::readResults(write(dir, "new.h5", r)), false, &b);
  };
  const Verification good = judge(104, 11);
  EXPECT_TRUE(good.pass) << (good.reasons.empty() ? "" : good.reasons.front());
  // intra has two runs: not judged, said in a note
  EXPECT_TRUE(std::any_of(good.notes.begin(), good.notes.end(), [](const std::string& n) {
    return n.find("intra all_reduce") != std::string::npos && n.find("fewer than 3") != std::string::npos;
  }));
  const Verification slow = judge(50, 11);  // below 105 - 3 x 14.8
  EXPECT_FALSE(slow.pass);
  ASSERT_EQ(slow.failed, 1);
  EXPECT_NE(slow.reasons.front().find("baseline_class_bw rank pairs inter_node"), std::string::npos);
  const Verification slowCollective = judge(104, 5);  // below 11 - 3 x max(1.48, 0.22)
  EXPECT_FALSE(slowCollective.pass);
  EXPECT_NE(slowCollective.reasons.front().find("baseline_busbw world all_reduce float"), std::string::npos);
}

TEST(Baseline, CompareShowsTheFileAgainstIt) {
  TempDir dir;
  const Baseline b = buildBaseline(readAll(baselineRuns(dir)));
  RunSpec r = at("2026-05-01T00:00:00Z", 10, 52.5);
  r.rows = {row("world", 0, 1 << 20, 11)};
  const results::ResultsFile file = results::readResults(write(dir, "new.h5", r));
  const Comparison c = compare({summarizeBaseline(b), summarize(file, "new", nullptr)}, 0.1);
  const auto found = std::find_if(c.rows.begin(), c.rows.end(),
                                  [](const CompareRow& x) { return x.key == "pairs.inter_node.baseline"; });
  ASSERT_NE(found, c.rows.end());
  EXPECT_DOUBLE_EQ(*found->cells[0].value, 105);
  EXPECT_DOUBLE_EQ(*found->cells[1].ratio, 0.5);
  EXPECT_TRUE(found->cells[1].differs);
  // the file's findings and topology stay; the baseline has none to show
  const auto errors =
      std::find_if(c.rows.begin(), c.rows.end(), [](const CompareRow& x) { return x.key == "findings.error"; });
  ASSERT_NE(errors, c.rows.end());
  EXPECT_FALSE(errors->cells[0].value.has_value());
  EXPECT_EQ(errors->cells[1].value, 0.0);
  EXPECT_EQ(c.files.front().label, "baseline (4 runs)");
}

TEST(HistoryCommand, DamagedFilesSkippedWithAWarningEach) {
  TempDir dir;
  write(dir, "good.h5", at("2026-06-01T00:00:00Z"));
  fs::create_directories(in(dir, "sub"));
  write(dir, "sub/good2.h5", at("2026-06-02T00:00:00Z"));
  std::ofstream(in(dir, "notes.h5")) << "not hdf5\n";
  fs::copy_file(in(dir, "good.h5"), in(dir, "cut.h5"));
  fs::resize_file(in(dir, "cut.h5"), fs::file_size(in(dir, "good.h5")) / 3);
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  const int rc = historyCommand({dir.path().string(), "--json", "--write-baseline", in(dir, "base.json")});
  const std::string out = testing::internal::GetCapturedStdout();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 0);
  const auto json = nlohmann::json::parse(out.substr(0, out.rfind('}') + 1));
  EXPECT_EQ(json["runs"].size(), 2u);
  EXPECT_EQ(json["skipped"].size(), 2u);
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 3) << err;  // two warnings, the baseline written
  EXPECT_NE(err.find("notes.h5"), std::string::npos);
  EXPECT_NE(err.find("cut.h5"), std::string::npos);
  EXPECT_EQ(readBaseline(in(dir, "base.json")).runs, 2);
}

TEST(HistoryCommand, NoReadableFileIsAUsageError) {
  TempDir dir;
  std::ofstream(in(dir, "notes.h5")) << "not hdf5\n";
  EXPECT_THROW(historyCommand({in(dir, "notes.h5")}), core::UsageError);
  EXPECT_THROW(historyCommand({in(dir, "absent")}), core::UsageError);
  fs::create_directories(in(dir, "empty"));
  EXPECT_THROW(historyCommand({in(dir, "empty")}), core::UsageError);
  // a baseline that is none: verify and compare refuse it
  EXPECT_THROW(verifyCommand({in(dir, "notes.h5"), "--baseline", in(dir, "notes.h5")}), core::UsageError);
  EXPECT_THROW(compareCommand({in(dir, "notes.h5"), "--baseline", in(dir, "notes.h5")}), core::UsageError);
}

TEST(HistoryReader, DigestAgreesWithTheFullReader) {
  TempDir dir;
  RunSpec r = blamedIn("2026-07-01T00:00:00Z", {blame(core::FindingKind::kNode, 1)});
  r.interNode = 9;
  const std::string path = write(dir, "run.h5", r);
  const results::RunDigest light = results::readRunDigest(path, false);
  const results::RunDigest full = results::digestOf(results::readResults(path));
  EXPECT_EQ(light.nodes, full.nodes);
  EXPECT_EQ(light.provenance.createdUtc, full.provenance.createdUtc);
  ASSERT_EQ(light.findings.size(), 1u);
  EXPECT_EQ(light.findings[0].nodeA, full.findings[0].nodeA);
  EXPECT_EQ(light.matrices.nodeBw.values.size(), full.matrices.nodeBw.values.size());
  EXPECT_EQ(classBandwidths(light.matrices), classBandwidths(full.matrices));
  EXPECT_TRUE(light.collectives.empty());
}


RunSpec on(const std::string& created, const std::string& host, int nodes, int first = 0) {
  RunSpec r = at(created);
  r.host = host;
  r.nodes = nodes;
  r.firstNode = first;
  r.hostnames = true;
  return r;
}

TEST(History, RunsOfOverlappingHostSetsAreOneCluster) {
  TempDir dir;
  // nid0-1, nid1-2, nid2-3: no two runs alike, every one sharing a host with the next
  const auto runs = readAll({write(dir, "a.h5", on("2026-08-01T00:00:00Z", "nid", 2, 0)),
                             write(dir, "b.h5", on("2026-08-02T00:00:00Z", "nid", 2, 1)),
                             write(dir, "c.h5", on("2026-08-03T00:00:00Z", "nid", 2, 2))});
  const History h = buildHistory(runs, {});
  ASSERT_EQ(h.clusters.size(), 1u);
  EXPECT_EQ(h.clusters[0].hosts, (std::vector<std::string>{"nid0", "nid1", "nid2", "nid3"}));
  EXPECT_EQ(h.clusters[0].runs, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(h.runs[1].hosts, (std::vector<std::string>{"nid1", "nid2"}));
  EXPECT_TRUE(h.warnings.empty());
  EXPECT_EQ(historyToJson(h)["mixed_clusters"], false);
}

// "localhost" (a log run on one machine prints it) names no machine: two such runs are not joined.
TEST(History, LocalhostNamesNoMachine) {
  TempDir dir;
  const History h = buildHistory(readAll({write(dir, "p.h5", on("2026-10-01T00:00:00Z", "localhost", 1)),
                                          write(dir, "q.h5", on("2026-10-02T00:00:00Z", "localhost", 1))}),
                                 {});
  ASSERT_EQ(h.clusters.size(), 2u);
  ASSERT_EQ(h.warnings.size(), 1u);
  EXPECT_NE(h.warnings[0].find("localhost ("), std::string::npos) << h.warnings[0];
}

TEST(History, RunsOfTwoClustersAreWarnedAboutNotCountedAsOne) {
  TempDir dir;
  const std::vector<std::string> paths{write(dir, "a1.h5", on("2026-09-01T00:00:00Z", "a", 2)),
                                       write(dir, "b1.h5", on("2026-09-02T00:00:00Z", "b", 3)),
                                       write(dir, "a2.h5", on("2026-09-03T00:00:00Z", "a", 2))};
  const History h = buildHistory(readAll(paths), {});
  ASSERT_EQ(h.clusters.size(), 2u);
  EXPECT_EQ(h.clusters[0].runs, (std::vector<int>{0, 2}));
  EXPECT_EQ(h.clusters[1].hosts, (std::vector<std::string>{"b0", "b1", "b2"}));
  EXPECT_EQ(h.runs[1].cluster, 1);
  ASSERT_EQ(h.warnings.size(), 1u);
  EXPECT_NE(h.warnings[0].find("the 3 runs mix 2 clusters"), std::string::npos) << h.warnings[0];
  EXPECT_NE(h.warnings[0].find("cluster 1: 2 runs on a0, a1; cluster 2: 1 run on b0, b1, b2"), std::string::npos)
      << h.warnings[0];
  EXPECT_EQ(subject(h.nodes, "a0").runs.size(), 2u);  // a node's history stays its own
  const auto j = historyToJson(h);
  EXPECT_EQ(j["mixed_clusters"], true);
  EXPECT_EQ(j["clusters"].size(), 2u);
  EXPECT_EQ(j["runs"][1]["cluster"], 1);
  EXPECT_EQ(j["runs"][1]["hosts"].size(), 3u);
  EXPECT_EQ(j["warnings"][0], h.warnings[0]);
  EXPECT_NE(historyToText(h).find("2 clusters (host sets sharing no host)"), std::string::npos);
  EXPECT_NE(historyToHtml(h).find("warning: the 3 runs mix 2 clusters"), std::string::npos);
  // the command says it on stderr, also with --json
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  EXPECT_EQ(historyCommand({dir.path().string(), "--json"}), 0);
  testing::internal::GetCapturedStdout();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("fabricmap history: warning: the 3 runs mix 2 clusters"), std::string::npos) << err;
}

TEST(History, FilesWithoutHostnamesAreKeyedByTheirNodeNames) {
  TempDir dir;
  RunSpec x = at("2026-10-01T00:00:00Z");
  RunSpec y = at("2026-10-02T00:00:00Z");
  y.host = "z";
  const History h = buildHistory(readAll({write(dir, "x.h5", x), write(dir, "y.h5", y)}), {});
  EXPECT_EQ(h.runs[0].hosts, (std::vector<std::string>{"h0", "h1", "h2", "h3"}));
  EXPECT_EQ(h.clusters.size(), 2u);
}

}  // namespace
}  // namespace fabricmap::orchestrator
