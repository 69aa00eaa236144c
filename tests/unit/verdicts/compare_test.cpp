// `compare`: summaries of files with different rank counts line up by figure, not by column;
// figures beyond the tolerance from the first file are marked, within it they are not.
#include "orchestrator/verdicts/compare.h"

#include <gtest/gtest.h>

#include <fstream>
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
      r.busbwMedian = s >= 8 * kMiB ? plateau : plateau / 10;
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
  EXPECT_DOUBLE_EQ(s.plateaus[1].peak, 100);
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

TEST(Compare, AnImportedLogsPeaksAreTheLogsOwn) {
  // the real GH200 log: its largest busbw is 122.57 out of place and 123.11 in place, both at
  // 128 MiB (tests/data/nccl-tests/labels.tsv); never their mean
  const std::string name =
      std::string(FABRICMAP_TEST_DATA) + "/nccl-tests/gh200-2node-8gpu-allreduce-slingshot-cscs-alps.txt";
  std::ifstream in(name);
  std::stringstream text;
  text << in.rdbuf();
  const results::NcclTestsImport imported = results::importNcclTests({results::parseNcclTestsLog(text.str(), name)});
  results::ResultsFile f;
  f.path = "gh200.h5";
  f.topology = imported.topology;
  for (const auto& [step, rows] : imported.steps) f.collectives.insert(f.collectives.end(), rows.begin(), rows.end());
  const Comparison c = compare({summarize(f, "gh200", nullptr)}, 0.1);
  EXPECT_DOUBLE_EQ(*row(c, "collectives.world.all_reduce.peak_busbw").cells[0].value, 122.57);
  EXPECT_DOUBLE_EQ(*row(c, "collectives.world.all_reduce.peak_busbw_in_place").cells[0].value, 123.11);
}

}  // namespace
}  // namespace fabricmap::orchestrator
