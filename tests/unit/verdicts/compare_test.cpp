// `compare`: summaries of files with different rank counts line up by figure, not by column;
// figures beyond the tolerance from the first file are marked, within it they are not.
#include "orchestrator/verdicts/compare.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "orchestrator/verdicts/predict.h"
#include "results/nccl_tests_log.h"

namespace fabricmap::orchestrator {
namespace {

constexpr std::uint64_t kMiB = 1ull << 20;

// `nodes` nodes of `perNode` ranks; an intra and a world all_reduce sweep 1..32 MiB whose
// plateau is `intra` / `world` GB/s (small sizes a tenth of it); a rank matrix.
results::ResultsFile run(int nodes, int perNode, double intra, double world, const std::string& cls = "FULL_NVSWITCH") {
  results::ResultsFile f;
  f.path = "run.h5";
  f.complete = true;
  f.provenance.backend = "nccl";
  const int ranks = nodes * perNode;
  for (int n = 0; n < nodes; ++n) {
    core::NodeRecord node;
    node.node = n;
    node.name = "h" + std::to_string(n);
    node.gpus = perNode;
    node.ranks = perNode;
    node.topologyClass = cls;
    f.topology.nodes.push_back(node);
    for (int l = 0; l < perNode; ++l) {
      core::RankRecord r;
      r.rank = n * perNode + l;
      r.node = n;
      r.localRank = l;
      r.gpuName = "NVIDIA H100 80GB HBM3";
      f.topology.ranks.push_back(r);
    }
  }
  const auto add = [&](const std::string& scope, int group, int nranks, double plateau) {
    for (std::uint64_t s = kMiB; s <= 32 * kMiB; s *= 2) {
      core::CollectiveRecord r;
      r.scope = scope;
      r.op = "all_reduce";
      r.group = group;
      r.ranks = std::to_string(group * nranks) + "-" + std::to_string(group * nranks + nranks - 1);
      r.nranks = nranks;
      r.bytes = s;
      r.busbw = r.busbwMedian = s >= 8 * kMiB ? plateau : plateau / 10;
      r.dtype = "float";
      f.collectives.push_back(r);
    }
  };
  for (int n = 0; n < nodes; ++n) add("intra", n, perNode, intra);
  add("world", 0, ranks, world);
  f.hasMatrices = true;
  f.matrices.pairsMeasured = true;
  f.matrices.rankUnidir = core::nanMatrix(ranks);
  f.matrices.rankLinkClass.n = ranks;
  f.matrices.rankLinkClass.table.assign(static_cast<std::size_t>(ranks * ranks), core::LinkClass::kSelf);
  for (int a = 0; a < ranks; ++a) {
    for (int b = 0; b < ranks; ++b) {
      if (a == b) continue;
      const bool same = a / perNode == b / perNode;
      f.matrices.rankLinkClass.table[f.matrices.rankUnidir.index(a, b)] =
          same ? core::LinkClass::kNvswitch : core::LinkClass::kInterNode;
      f.matrices.rankUnidir.at(a, b) = same ? 380.f : 45.f;
    }
  }
  f.findings.push_back({core::Severity::kWarning, core::FindingKind::kLink, "x", 1, 2, 0.5, "GB/s", "m"});
  return f;
}

const CompareRow& row(const Comparison& c, const std::string& key) {
  for (const CompareRow& r : c.rows) {
    if (r.key == key) return r;
  }
  throw std::runtime_error("no row " + key);
}

TEST(Compare, DifferentRankCountsLineUpByFigure) {
  results::ResultsFile a = run(2, 4, 370, 300);
  results::ResultsFile b = run(1, 2, 360, 200, "NVLINK_PAIRS");
  b.matrices.rankUnidir.at(0, 1) = 100.f;
  b.findings.clear();
  const Comparison c = compare({summarize(a, "A", nullptr), summarize(b, "B", nullptr)}, 0.1);
  ASSERT_EQ(c.files.size(), 2u);
  EXPECT_EQ(row(c, "files.ranks").cells[1].value, 2);
  EXPECT_FALSE(row(c, "files.ranks").cells[1].differs);  // structure, not a verdict
  const CompareRow& intra = row(c, "collectives.intra.all_reduce.plateau_busbw");
  EXPECT_DOUBLE_EQ(*intra.cells[0].value, 370);
  EXPECT_DOUBLE_EQ(*intra.cells[1].value, 360);
  EXPECT_FALSE(intra.cells[1].differs);  // 2.7% < 10%
  const CompareRow& world = row(c, "collectives.world.all_reduce.plateau_busbw");
  EXPECT_TRUE(world.cells[1].differs);  // 200 vs 300
  EXPECT_NEAR(*world.cells[1].ratio, 2.0 / 3.0, 1e-12);
  EXPECT_EQ(row(c, "collectives.world.all_reduce.nranks").cells[1].value, 2);
  EXPECT_EQ(row(c, "collectives.world.all_reduce.plateau_bytes").cells[0].text, "8 MiB..32 MiB");
  EXPECT_TRUE(row(c, "topology.classes").cells[1].differs);
  EXPECT_EQ(row(c, "topology.classes").cells[0].text, "FULL_NVSWITCH x2");
  // B has no inter-node pairs: "-", never marked
  const CompareRow& inter = row(c, "pairs.inter_node.median");
  EXPECT_EQ(inter.cells[1].text, "-");
  EXPECT_FALSE(inter.cells[1].differs);
  const CompareRow& nvsMin = row(c, "pairs.nvswitch.min");
  EXPECT_TRUE(nvsMin.cells[1].differs);
  EXPECT_EQ(row(c, "pairs.nvswitch.worst").cells[1].text.rfind("0->1 100", 0), 0u);
  EXPECT_TRUE(row(c, "findings.warning").cells[1].differs);  // 1 vs 0
  EXPECT_FALSE(row(c, "findings.error").cells[1].differs);   // 0 vs 0
}

TEST(Compare, ToleranceDecidesTheMark) {
  const auto summaries = [] {
    return std::vector<FileSummary>{summarize(run(1, 4, 100, 100), "a", nullptr),
                                    summarize(run(1, 4, 115, 100), "b", nullptr)};
  };
  EXPECT_TRUE(row(compare(summaries(), 0.1), "collectives.intra.all_reduce.plateau_busbw").cells[1].differs);
  EXPECT_FALSE(row(compare(summaries(), 0.2), "collectives.intra.all_reduce.plateau_busbw").cells[1].differs);
  EXPECT_THROW(compare(summaries(), -1), core::UsageError);
  EXPECT_THROW(compare({}, 0.1), core::UsageError);
}

TEST(Compare, PlateauAndPeakAreNotTheAverage) {
  const FileSummary s = summarize(run(1, 4, 100, 100), "a", nullptr);
  ASSERT_FALSE(s.plateaus.empty());
  EXPECT_EQ(s.plateaus[0].scope, "world");  // world, intra, inter order
  EXPECT_DOUBLE_EQ(s.plateaus[1].busbw, 100);
  ASSERT_FALSE(s.peaks.empty());
  EXPECT_DOUBLE_EQ(s.peaks[1].outOfPlace.busbw, 100);
}

TEST(Compare, TextMarksAndJsonFlags) {
  const Comparison c = compare({summarize(run(1, 4, 100, 100), "a.h5", nullptr),
                                summarize(run(1, 2, 50, 100), "b.h5", nullptr)},
                               0.1);
  const std::string text = comparisonToText(c);
  EXPECT_NE(text.find("50 *"), std::string::npos) << text;
  EXPECT_NE(text.find("* differs from the reference (a.h5) by more than 10%"), std::string::npos);
  const auto j = comparisonToJson(c);
  EXPECT_EQ(j["reference"], "a.h5");
  EXPECT_EQ(j["files"][1]["ranks"], 2);
  bool found = false;
  for (const auto& r : j["rows"]) {
    if (r["key"] != "collectives.intra.all_reduce.plateau_busbw") continue;
    found = true;
    EXPECT_EQ(r["values"][1]["value"], 50.0);
    EXPECT_EQ(r["values"][1]["differs"], true);
    EXPECT_EQ(r["values"][0]["differs"], false);
  }
  EXPECT_TRUE(found);
}

TEST(Compare, PredictionWhenAModelIsGivenAndItsReasonWhenItCannot) {
  PredictConfig pc;
  const auto preset = findPreset("llama-7b");
  ASSERT_TRUE(preset);
  pc.model = preset->model;
  pc.seq = preset->seq;
  pc.globalBatch = 64;
  pc.layout = core::parseLayout("tp=4,pp=1,dp=2");
  pc.peakTflops = 989;
  validate(pc);
  results::ResultsFile a = run(2, 4, 370, 300);
  // inter-node DP needs an inter or world curve: the world one stands in
  const FileSummary s = summarize(a, "a", &pc);
  ASSERT_TRUE(s.prediction || !s.predictionError.empty());
  PredictConfig noPeak = pc;
  noPeak.peakTflops.reset();
  results::ResultsFile host = run(1, 8, 10, 10, "NO_GPU");
  for (auto& r : host.topology.ranks) r.gpuName.clear();
  const FileSummary h = summarize(host, "host", &noPeak);
  EXPECT_FALSE(h.prediction);
  EXPECT_NE(h.predictionError.find("--peak-tflops"), std::string::npos);
  const Comparison c = compare({s, h}, 0.1);
  EXPECT_EQ(row(c, "prediction.step_seconds").cells[1].text, "unknown");
}

// One row of a fabricmap run's table: busbw from the mean time, busbwMedian from the median time.
core::CollectiveRecord sweepRow(const std::string& scope, int group, bool inPlace, std::uint64_t bytes, double busbw,
                                double busbwMedian) {
  core::CollectiveRecord r;
  r.scope = scope;
  r.op = "all_reduce";
  r.group = group;
  r.ranks = std::to_string(group * 4) + "-" + std::to_string(group * 4 + 3);
  r.nranks = 4;
  r.dtype = "float";
  r.inPlace = inPlace;
  r.bytes = bytes;
  r.busbw = busbw;
  r.busbwMedian = busbwMedian;
  r.checked = true;
  return r;
}

TEST(Compare, PeakIsTheLargestBusbwPerPlacementAsNcclTestsPrintsIt) {
  results::ResultsFile f = run(2, 4, 0, 0);
  f.collectives.clear();
  // intra, two nodes: per group the largest busbw (mean time) of each placement
  using Row = std::tuple<int, bool, std::uint64_t, double, double>;  // group, in place, bytes, busbw, median
  for (const auto& [group, inPlace, bytes, busbw, median] : std::vector<Row>{
           {0, false, kMiB, 100, 90}, {0, false, 2 * kMiB, 150, 160}, {0, false, 4 * kMiB, 140, 170},
           {0, true, kMiB, 110, 100}, {0, true, 2 * kMiB, 155, 150}, {0, true, 4 * kMiB, 170, 150},
           {1, false, kMiB, 80, 85}, {1, false, 2 * kMiB, 120, 125}, {1, false, 4 * kMiB, 130, 135},
           {1, true, kMiB, 90, 95}, {1, true, 2 * kMiB, 125, 130}, {1, true, 4 * kMiB, 120, 125}}) {
    f.collectives.push_back(sweepRow("intra", group, inPlace, bytes, busbw, median));
  }
  core::CollectiveRecord wrong = sweepRow("intra", 0, false, 8 * kMiB, 400, 400);
  wrong.wrong = 2;  // a wrong result's figure is no peak
  f.collectives.push_back(wrong);
  // world, one group: where the peak was reached is known
  f.collectives.push_back(sweepRow("world", 0, false, 4 * kMiB, 50, 60));
  f.collectives.push_back(sweepRow("world", 0, false, 8 * kMiB, 70, 65));
  f.collectives.push_back(sweepRow("world", 0, true, 8 * kMiB, 72, 66));
  const FileSummary s = summarize(f, "run", nullptr);
  const CollectivePeak intra = peakOf(f.collectives, "intra", "all_reduce");
  EXPECT_DOUBLE_EQ(intra.outOfPlace.busbw, (150.0 + 130.0) / 2);  // the median of the two groups' peaks
  EXPECT_DOUBLE_EQ(intra.inPlace.busbw, (170.0 + 125.0) / 2);
  EXPECT_EQ(intra.outOfPlace.groups, 2);
  EXPECT_EQ(intra.outOfPlace.bytes, 0u);
  const CollectivePeak world = peakOf(f.collectives, "world", "all_reduce");
  EXPECT_DOUBLE_EQ(world.outOfPlace.busbw, 70);
  EXPECT_EQ(world.outOfPlace.bytes, 8 * kMiB);
  EXPECT_DOUBLE_EQ(world.inPlace.busbw, 72);
  const Comparison c = compare({s}, 0.1);
  EXPECT_DOUBLE_EQ(*row(c, "collectives.intra.all_reduce.peak_busbw").cells[0].value, 140);
  EXPECT_DOUBLE_EQ(*row(c, "collectives.intra.all_reduce.peak_busbw_in_place").cells[0].value, 147.5);
  EXPECT_NE(row(c, "collectives.intra.all_reduce.peak_busbw").label.find("out-of-place"), std::string::npos);
  const auto j = comparisonToJson(c);
  EXPECT_EQ(j["files"][0]["collectives"][0]["scope"], "world");
  EXPECT_EQ(j["files"][0]["collectives"][0]["peak_busbw_gbs"], 70.0);
  EXPECT_EQ(j["files"][0]["collectives"][0]["peak_busbw_in_place_gbs"], 72.0);
  EXPECT_EQ(j["files"][0]["collectives"][1]["peak_busbw_gbs"], 140.0);
  EXPECT_TRUE(j["peak_rule"].get<std::string>().starts_with("nccl-tests' figure"));
  EXPECT_NE(comparisonToText(c).find("# peak: nccl-tests' figure"), std::string::npos);
}

// A real nccl-tests log of tests/data/nccl-tests as `import` makes it a results file.
results::ResultsFile importedLog(const std::string& log, const std::string& path) {
  const std::string name = std::string(FABRICMAP_TEST_DATA) + "/nccl-tests/" + log;
  std::ifstream in(name);
  std::stringstream text;
  text << in.rdbuf();
  const results::NcclTestsImport imported = results::importNcclTests({results::parseNcclTestsLog(text.str(), name)});
  results::ResultsFile f;
  f.path = path;
  f.complete = true;
  f.topology = imported.topology;
  for (const auto& [step, rows] : imported.steps) f.collectives.insert(f.collectives.end(), rows.begin(), rows.end());
  return f;
}

constexpr const char* kA100Log = "a100-sxm4-8gpu-allreduce-superbench-testdata.txt";
constexpr const char* kGh200Log = "gh200-2node-8gpu-allreduce-slingshot-cscs-alps.txt";

TEST(Compare, AnImportedLogsPeaksAreTheLogsOwn) {
  // the real GH200 log: its largest busbw is 122.57 out of place and 123.11 in place, both at
  // 128 MiB (tests/data/nccl-tests/labels.tsv); never their mean
  const results::ResultsFile f = importedLog(kGh200Log, "gh200.h5");
  const Comparison c = compare({summarize(f, "gh200", nullptr)}, 0.1);
  EXPECT_DOUBLE_EQ(*row(c, "collectives.world.all_reduce.peak_busbw").cells[0].value, 122.57);
  EXPECT_DOUBLE_EQ(*row(c, "collectives.world.all_reduce.peak_busbw_in_place").cells[0].value, 123.11);
}


// One server of `gpus` GPUs that measured only its world scope, as an imported log of one node is:
// an all_reduce sweep 1..32 MiB whose busbw (mean and median time alike) plateaus at `plateau`.
results::ResultsFile oneServer(int gpus, double plateau, const std::string& gpu = "NVIDIA A100-SXM4-40GB") {
  results::ResultsFile f = run(1, gpus, 0, plateau);
  std::erase_if(f.collectives, [](const core::CollectiveRecord& r) { return r.scope == "intra"; });
  for (core::CollectiveRecord& r : f.collectives) r.busbw = r.busbwMedian;
  for (core::RankRecord& r : f.topology.ranks) r.gpuName = gpu;
  f.hasMatrices = false;
  f.matrices = {};
  f.findings.clear();
  return f;
}

const nlohmann::ordered_json& jsonRow(const nlohmann::ordered_json& j, const std::string& key) {
  for (const auto& r : j["rows"]) {
    if (r["key"] == key) return r;
  }
  throw std::runtime_error("no JSON row " + key);
}

bool mentions(const std::vector<std::string>& caveats, const std::string& text) {
  return std::any_of(caveats.begin(), caveats.end(), [&](const std::string& c) { return c.find(text) != std::string::npos; });
}

TEST(Compare, AOneNodeFilesWorldAnswersForItsIntraScope) {
  const FileSummary server = summarize(oneServer(8, 230), "server", nullptr);
  EXPECT_TRUE(server.oneNode);
  EXPECT_TRUE(server.intraFromWorld);
  const Comparison c = compare({summarize(run(2, 8, 370, 300), "two", nullptr), server}, 0.1);
  const CompareRow& intra = row(c, "collectives.intra.all_reduce.plateau_busbw");
  ASSERT_TRUE(intra.cells[1].value);
  EXPECT_DOUBLE_EQ(*intra.cells[1].value, 230);  // its world rows, as the node's inside
  EXPECT_TRUE(intra.caveats.empty()) << intra.caveats.front();  // both are an 8-GPU node's inside
  const auto j = comparisonToJson(c);
  bool fromWorld = false;
  for (const auto& col : j["files"][1]["collectives"]) fromWorld |= col["scope"] == "intra" && col["from_scope"] == "world";
  EXPECT_TRUE(fromWorld);
  EXPECT_EQ(j["files"][0]["collectives"][1]["from_scope"], "intra");
  EXPECT_EQ(j["files"][1]["one_node"], true);
  EXPECT_NE(comparisonToText(c).find("# server: one node: its world scope is the node's inside"), std::string::npos);
  // a one-node run that measured its intra scope keeps its own figure
  const FileSummary own = summarize(run(1, 4, 100, 90), "own", nullptr);
  EXPECT_FALSE(own.intraFromWorld);
  EXPECT_DOUBLE_EQ(own.plateaus[1].busbw, 100);
}

TEST(Compare, CaveatsNameWhatTheFilesMeasuredDifferently) {
  // a one-node world (NVLink only) against a two-node world (the network): the world rows say so
  const Comparison c =
      compare({summarize(oneServer(8, 230), "server", nullptr), summarize(run(2, 4, 370, 100), "pair", nullptr)}, 0.1);
  for (const char* what : {"peak_busbw", "peak_busbw_in_place", "plateau_busbw"}) {
    const CompareRow& r = row(c, std::string("collectives.world.all_reduce.") + what);
    EXPECT_TRUE(mentions(r.caveats, "world scope: one node: NVLink/PCIe inside it, no network (server); 2 nodes: "
                                    "across the network (pair)"))
        << what << ": " << (r.caveats.empty() ? "none" : r.caveats.front());
  }
  EXPECT_TRUE(row(c, "collectives.world.all_reduce.plateau_bytes").caveats.empty());  // context rows carry none
  // groups of other sizes, and a sweep that stopped early: its plateau came from other sizes
  results::ResultsFile shortSweep = oneServer(4, 240);
  std::erase_if(shortSweep.collectives, [](const core::CollectiveRecord& r) { return r.bytes > 8 * kMiB; });
  const Comparison d =
      compare({summarize(oneServer(8, 230), "eight", nullptr), summarize(shortSweep, "short", nullptr)}, 0.1);
  const CompareRow& plateau = row(d, "collectives.world.all_reduce.plateau_busbw");
  EXPECT_TRUE(mentions(plateau.caveats, "groups of 8 ranks (eight); 4 ranks (short)"));
  EXPECT_TRUE(mentions(plateau.caveats, "plateau over 8 MiB..32 MiB (eight); 2 MiB..8 MiB (short)"));
  EXPECT_FALSE(mentions(plateau.caveats, "world scope"));  // both one node
  EXPECT_TRUE(mentions(row(d, "collectives.world.all_reduce.peak_busbw").caveats, "sweep up to 32 MiB (eight); 8 MiB (short)"));
  const std::string text = comparisonToText(d);
  EXPECT_NE(text.find("  ! groups of 8 ranks (eight); 4 ranks (short)"), std::string::npos) << text;
  const auto j = comparisonToJson(d);
  EXPECT_FALSE(jsonRow(j, "collectives.world.all_reduce.plateau_busbw")["caveats"].empty());
  EXPECT_TRUE(jsonRow(j, "files.ranks")["caveats"].empty());
  // files that measured the same thing: no caveat anywhere
  const Comparison same =
      compare({summarize(run(1, 4, 100, 100), "a", nullptr), summarize(run(1, 4, 115, 100), "b", nullptr)}, 0.1);
  for (const CompareRow& r : same.rows) EXPECT_TRUE(r.caveats.empty()) << r.key << ": " << r.caveats.front();
  EXPECT_EQ(comparisonToText(same).find(" ! "), std::string::npos);
}

TEST(Compare, ScalingEfficiencyFromOneNodeFilesOfTheSameGpu) {
  const Comparison c = compare({summarize(oneServer(8, 230), "a100-8", nullptr),
                                summarize(oneServer(4, 240), "a100-4", nullptr),
                                summarize(oneServer(4, 100, "NVIDIA H100 80GB HBM3"), "h100-4", nullptr),
                                summarize(run(2, 4, 370, 300), "pair", nullptr)},
                               0.1);
  const CompareRow& r = row(c, "scaling.all_reduce.efficiency");
  EXPECT_EQ(r.section, "scaling");
  EXPECT_FALSE(r.compared);
  ASSERT_TRUE(r.cells[0].value);
  EXPECT_DOUBLE_EQ(*r.cells[0].value, 230.0 / 240.0);  // busbw is constant under linear scaling
  EXPECT_EQ(r.cells[0].text, "0.9583 (8/4 GPUs)");
  EXPECT_DOUBLE_EQ(*r.cells[1].value, 1.0);
  EXPECT_EQ(r.cells[2].text, "-");  // no other H100 file to scale against
  EXPECT_EQ(r.cells[3].text, "-");  // two nodes: not one server's inside
  EXPECT_TRUE(r.caveats.empty());
  EXPECT_NE(comparisonToText(c).find("# scaling: one-node files of one GPU model"), std::string::npos);
  EXPECT_EQ(comparisonToJson(c)["scaling_rule"], std::string(kScalingRule));
  // measured on other hosts, or over other sizes: said beside the figure
  results::ResultsFile elsewhere = oneServer(4, 240);
  elsewhere.topology.nodes[0].name = "other-host";
  std::erase_if(elsewhere.collectives, [](const core::CollectiveRecord& x) { return x.bytes > 8 * kMiB; });
  const Comparison d =
      compare({summarize(oneServer(8, 230), "eight", nullptr), summarize(elsewhere, "four", nullptr)}, 0.1);
  const CompareRow& e = row(d, "scaling.all_reduce.efficiency");
  EXPECT_TRUE(mentions(e.caveats, "measured on other hosts: other-host (four); h0 (eight)")) << e.caveats.front();
  EXPECT_TRUE(mentions(e.caveats, "plateau over"));
  // one GPU count only: no scaling row
  const Comparison one =
      compare({summarize(oneServer(8, 230), "a", nullptr), summarize(oneServer(8, 220), "b", nullptr)}, 0.1);
  EXPECT_THROW(row(one, "scaling.all_reduce.efficiency"), std::runtime_error);
}

PredictConfig llamaOn(const std::string& layout) {
  PredictConfig pc;
  const auto preset = findPreset("llama-7b");
  pc.model = preset->model;
  pc.seq = preset->seq;
  pc.globalBatch = 64;
  pc.layout = core::parseLayout(layout);
  pc.peakTflops = 989;
  validate(pc);
  return pc;
}

TEST(Compare, EachFileIsPricedAtItsOwnOffer) {
  const PredictConfig pc = llamaOn("tp=4");  // one node's tensor parallelism: priced from intra
  const std::vector<ComparedFile> files{{"a.h5", "a"}, {"dir/b.h5", "b"}};
  Providers providers = parseProviders("b.h5 3 16G\n", "p.txt");
  const std::vector<Offer> offers = offersFor(files, &providers, {}, 2.0);
  const FileSummary a = summarize(run(2, 4, 370, 300), "a", &pc, offers[0]);
  const FileSummary b = summarize(run(2, 4, 370, 300), "b", &pc, offers[1]);
  ASSERT_TRUE(a.prediction && a.prediction->gpuHours && a.prediction->cost) << a.predictionError;
  ASSERT_TRUE(b.prediction && b.prediction->cost) << b.predictionError;
  EXPECT_DOUBLE_EQ(*a.prediction->cost, *a.prediction->gpuHours * 2);  // --price-per-gpu-hour
  EXPECT_DOUBLE_EQ(*b.prediction->cost, *b.prediction->gpuHours * 3);  // its providers line
  EXPECT_EQ(a.priceFrom, "--price-per-gpu-hour");
  EXPECT_EQ(b.priceFrom, "p.txt:1");
  const Comparison c = compare({a, b}, 0.1);
  EXPECT_DOUBLE_EQ(*row(c, "files.price").cells[1].value, 3);
  EXPECT_DOUBLE_EQ(*row(c, "prediction.cost").cells[1].value, *b.prediction->cost);
  EXPECT_TRUE(row(c, "prediction.cost").cells[1].differs);  // the same step at 1.5 x the price
  EXPECT_DOUBLE_EQ(*row(c, "prediction.days").cells[0].value, *a.prediction->days);
  EXPECT_EQ(row(c, "prediction.days").unit, "days");
  // the step's MFU and the compute share, each under its own name (a compute share of 99 % may be
  // an MFU of 40 %)
  EXPECT_DOUBLE_EQ(*row(c, "prediction.step_mfu").cells[0].value, *a.prediction->stepMfu * 100);
  EXPECT_DOUBLE_EQ(*row(c, "prediction.utilization").cells[0].value, *a.prediction->utilization * 100);
  EXPECT_LT(*row(c, "prediction.step_mfu").cells[0].value, *row(c, "prediction.utilization").cells[0].value);
  EXPECT_EQ(row(c, "prediction.utilization").label, "predicted compute share of the step %");
  // b's GPUs hold 16 GiB: the layout does not fit, and its days and cost say they cannot be had
  EXPECT_EQ(row(c, "prediction.fits").cells[0].text, "unknown");  // a records no GPU memory
  EXPECT_EQ(row(c, "prediction.fits").cells[1].text, "no");
  EXPECT_DOUBLE_EQ(*row(c, "topology.gpu_memory").cells[1].value, 16);
  EXPECT_TRUE(mentions(row(c, "prediction.cost").caveats, "does not fit the GPU memory of b"));
  const auto j = comparisonToJson(c);
  EXPECT_EQ(j["files"][1]["price_per_gpu_hour"], 3.0);
  EXPECT_EQ(j["files"][1]["price_from"], "p.txt:1");
  EXPECT_EQ(j["files"][1]["gpu_memory_bytes"], 16.0 * (1ull << 30));
  EXPECT_EQ(j["files"][0]["prediction"]["days"], *a.prediction->days);
  EXPECT_NE(comparisonToText(c).find("# b: price 3 USD per GPU-hour from p.txt:1"), std::string::npos);
}

TEST(CompareProviders, ProvidersFileLines) {
  const Providers p = parseProviders("# offers\n\na100      1.29   40G   # comment\ngh200.h5  $2.49  -\nx - 80GiB\r\n", "p.txt");
  ASSERT_EQ(p.lines.size(), 3u);
  EXPECT_EQ(p.lines[0].line, 3);
  EXPECT_EQ(p.lines[0].subject, "a100");
  EXPECT_DOUBLE_EQ(*p.lines[0].pricePerGpuHour, 1.29);
  EXPECT_DOUBLE_EQ(*p.lines[0].gpuMemoryBytes, 40.0 * (1ull << 30));
  EXPECT_DOUBLE_EQ(*p.lines[1].pricePerGpuHour, 2.49);
  EXPECT_FALSE(p.lines[1].gpuMemoryBytes);
  EXPECT_FALSE(p.lines[2].pricePerGpuHour);
  EXPECT_DOUBLE_EQ(*p.lines[2].gpuMemoryBytes, 80.0 * (1ull << 30));
  for (const auto& [text, expected] : std::vector<std::pair<std::string, std::string>>{
           {"a100\n", "p.txt:1: expected a file or label"},
           {"a 1 40G x\n", "p.txt:1: 4 columns"},
           {"# x\na lots\n", "p.txt:2: price per GPU-hour: 'lots' is not a number"},
           {"a -1\n", "p.txt:1: price per GPU-hour: -1 is outside"},
           {"a nan\n", "p.txt:1: price per GPU-hour: 'nan' is not a number"},
           {"a 1e400\n", "p.txt:1: price per GPU-hour: '1e400' is not a number"},
           {"a 1 40\n", "p.txt:1: GPU memory: '40' is outside 1 GiB..64 TiB"},
           {"a 1 40X\n", "p.txt:1: GPU memory: '40X' is not a size"},
           {"a 1\nb 2\na 3\n", "p.txt:3: 'a' given twice"},
           {"a\x01 1\n", "p.txt:1: control character"},
           {"a 1 " + std::string(1100, ' ') + "\n", "p.txt:1: line longer than 1024 bytes"},
           {"# nothing\n\n", "p.txt: no line names a file"},
           {std::string(65 * 1024, '#'), "p.txt: larger than 64 KiB"}}) {
    try {
      parseProviders(text, "p.txt");
      ADD_FAILURE() << "accepted: " << text.substr(0, 40);
    } catch (const core::UsageError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(expected, 0), 0u) << e.what();
    }
  }
}

TEST(CompareProviders, TheMostSpecificPriceWins) {
  const std::vector<ComparedFile> files{{"runs/a.h5", "a"}, {"runs/b.h5", "runs/b.h5"}};
  const Providers p = parseProviders("a 2 40G\nb.h5 5\n", "p.txt");
  const std::vector<Offer> o = offersFor(files, &p, {parsePriceArgument("a=$3")}, 1.0);
  EXPECT_DOUBLE_EQ(*o[0].pricePerGpuHour, 3);
  EXPECT_EQ(o[0].priceFrom, "--price");
  EXPECT_DOUBLE_EQ(*o[0].gpuMemoryBytes, 40.0 * (1ull << 30));
  EXPECT_EQ(o[0].memoryFrom, "p.txt:1");
  EXPECT_DOUBLE_EQ(*o[1].pricePerGpuHour, 5);  // named by its file name
  EXPECT_EQ(o[1].priceFrom, "p.txt:2");
  const std::vector<Offer> plain = offersFor(files, nullptr, {}, 1.0);
  EXPECT_EQ(plain[1].priceFrom, "--price-per-gpu-hour");
  EXPECT_FALSE(offersFor(files, nullptr, {}, std::nullopt)[0].pricePerGpuHour);
  const auto refused = [&](const std::function<void()>& f, const std::string& expected) {
    try {
      f();
      ADD_FAILURE() << "accepted; expected " << expected;
    } catch (const core::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  const Providers stray = parseProviders("a 2\nc.h5 1\n", "p.txt");
  refused([&] { offersFor(files, &stray, {}, std::nullopt); }, "p.txt:2: 'c.h5' is none of the compared files");
  const std::vector<ComparedFile> twins{{"x/a.h5", "x/a.h5"}, {"y/a.h5", "y/a.h5"}};
  refused([&] { offersFor(twins, nullptr, {parsePriceArgument("a.h5=1")}, std::nullopt); }, "names 2 of the compared");
  refused([&] { offersFor(files, nullptr, {parsePriceArgument("a=1"), parsePriceArgument("runs/a.h5=2")}, std::nullopt); },
          "priced twice");
  for (const char* bad : {"a.h5", "=2", "a=", "a=x", "a=-1", "a=-", "a=inf"}) refused([&] { parsePriceArgument(bad); }, "--price");
  EXPECT_EQ(parsePriceArgument("odd=name.h5=2.5").subject, "odd=name.h5");
}

TEST(Compare, TheRealLogsSideBySide) {
  // an 8-GPU A100 server and two GH200 nodes of four: the world rows compare NVLink with the
  // network, over other sizes, and say so; the A100's world is its intra figure
  const FileSummary a100 = summarize(importedLog(kA100Log, "a100.h5"), "a100", nullptr);
  const FileSummary gh200 = summarize(importedLog(kGh200Log, "gh200.h5"), "gh200", nullptr);
  EXPECT_TRUE(a100.oneNode);
  EXPECT_FALSE(gh200.oneNode);
  const Comparison c = compare({a100, gh200}, 0.1);
  const CompareRow& peak = row(c, "collectives.world.all_reduce.peak_busbw");
  EXPECT_DOUBLE_EQ(*peak.cells[0].value, 235.26);
  EXPECT_DOUBLE_EQ(*peak.cells[1].value, 122.57);
  EXPECT_TRUE(mentions(peak.caveats, "world scope: one node"));
  EXPECT_TRUE(mentions(peak.caveats, "sweep up to 8 GiB (a100); 128 MiB (gh200)"));
  EXPECT_TRUE(mentions(row(c, "collectives.world.all_reduce.plateau_busbw").caveats,
                       "plateau over 2 GiB..8 GiB (a100); 32 MiB..128 MiB (gh200)"));
  EXPECT_DOUBLE_EQ(*row(c, "collectives.intra.all_reduce.peak_busbw").cells[0].value, 235.26);
  EXPECT_EQ(row(c, "collectives.intra.all_reduce.peak_busbw").cells[1].text, "-");
}

}  // namespace
}  // namespace fabricmap::orchestrator
