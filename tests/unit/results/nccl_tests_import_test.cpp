// nccl-tests log import: every real log in tests/data/nccl-tests gives the figures its labels.tsv
// row states; hostile variants (cut short, garbage, launcher prefixes, NCCL chatter, CRLF) are
// read the same or refused with "FILE:LINE".
#include "tests/unit/results/nccl_tests_support.h"

namespace fabricmap::results {
namespace {

TEST(NcclTestsImport, EveryFixtureHasLabelsAndGivesTheirFigures) {
  const auto rows = labels();
  std::set<std::string> labelled;
  for (const auto& l : rows) labelled.insert(l.at("file"));
  for (const auto& entry : fs::directory_iterator(kData)) {
    if (entry.path().extension() == ".txt") {
      EXPECT_TRUE(labelled.count(entry.path().filename().string())) << entry.path() << " has no labels.tsv row";
    }
  }
  ASSERT_GE(rows.size(), 2u);
  for (const auto& l : rows) {
    SCOPED_TRACE(l.at("file"));
    const NcclTestsLog log = parseFixture(l.at("file"));
    ASSERT_EQ(log.tables.size(), 1u);
    const NcclTestsTable& t = log.tables.front();
    EXPECT_EQ(t.op, ncclTestsOp(l.at("collective")));
    EXPECT_EQ(std::to_string(t.ranks.size()), l.at("ranks"));
    const NcclTestsImport imported = importNcclTests({log});
    EXPECT_EQ(std::to_string(imported.topology.nodes.size()), l.at("nodes"));
    for (const auto& node : imported.topology.nodes) {
      EXPECT_EQ(std::to_string(node.ranks), l.at("gpus_per_node"));
      EXPECT_EQ(std::to_string(node.gpus), l.at("gpus_per_node"));
    }
    EXPECT_EQ(std::to_string(t.rows.front().bytes), l.at("min_msg_bytes"));
    EXPECT_EQ(std::to_string(t.rows.back().bytes), l.at("max_msg_bytes"));
    // peaks over each placement and over both, from the imported records
    double peak = -1, peakOop = -1, peakIp = -1;
    std::uint64_t peakAt = 0;
    for (const auto& [step, recs] : imported.steps) {
      ASSERT_EQ(recs.size(), 1u);
      const auto& c = recs.front();
      if (c.busbw > peak) {
        peak = c.busbw;
        peakAt = c.bytes;
      }
      (c.inPlace ? peakIp : peakOop) = std::max(c.inPlace ? peakIp : peakOop, c.busbw);
    }
    EXPECT_DOUBLE_EQ(peak, std::stod(l.at("peak_busbw_GBps")));
    EXPECT_EQ(std::to_string(peakAt), l.at("peak_busbw_at_bytes"));
    EXPECT_DOUBLE_EQ(peakOop, std::stod(l.at("peak_busbw_out_of_place_GBps")));
    EXPECT_DOUBLE_EQ(peakIp, std::stod(l.at("peak_busbw_in_place_GBps")));
    EXPECT_EQ(t.avgBusBandwidthLine, l.at("avg_bus_bandwidth_line"));
    EXPECT_DOUBLE_EQ(t.avgBusBandwidth, std::stod(l.at("avg_bus_bandwidth_value")));
    ASSERT_EQ(imported.imported.size(), 1u);
    EXPECT_EQ(imported.imported.front().avgBusBandwidthLine, l.at("avg_bus_bandwidth_line"));
    EXPECT_EQ(imported.steps.size(), 2 * t.rows.size());
    EXPECT_TRUE(log.warnings.empty());
  }
}

TEST(NcclTestsImport, OldLayoutWithoutRootAndUncheckedRows) {
  const NcclTestsLog log = parseFixture("a100-sxm4-8gpu-allreduce-superbench-testdata.txt");
  const NcclTestsTable& t = log.tables.front();
  EXPECT_EQ(t.opSource, "file name");  // the log never names its binary
  EXPECT_EQ(t.rows.size(), 34u);
  EXPECT_EQ(t.iters, 20);
  EXPECT_EQ(t.warmup, 5);
  EXPECT_EQ(t.outOfBounds, "0 OK");
  EXPECT_EQ(t.ranks[3].hostname, "localhost");
  EXPECT_EQ(t.ranks[3].device, 3);
  EXPECT_EQ(t.ranks[3].busId, "0x00");
  EXPECT_EQ(t.ranks[3].gpuName, "A100-SXM4-40GB");
  const NcclTestsImport imported = importNcclTests({log});
  const auto& [step, rows] = imported.steps.back();
  EXPECT_EQ(step.step, 67);
  EXPECT_TRUE(step.inPlace);
  EXPECT_EQ(step.status, "unchecked");
  const core::CollectiveRecord& c = rows.front();
  EXPECT_EQ(c.op, "all_reduce");
  EXPECT_EQ(c.redop, "sum");
  EXPECT_EQ(c.root, -1);
  EXPECT_EQ(c.dtype, "float");
  EXPECT_EQ(c.bytes, 8589934592u);
  EXPECT_EQ(c.count, 2147483648u);
  EXPECT_EQ(c.nranks, 8);
  EXPECT_EQ(c.ranks, "0-7");
  EXPECT_FALSE(c.checked);
  EXPECT_DOUBLE_EQ(c.timeUs.mean, 63959);
  EXPECT_DOUBLE_EQ(c.timeUs.median, 63959);
  EXPECT_TRUE(std::isnan(c.timeUs.min) && std::isnan(c.timeUs.max) && std::isnan(c.timeUs.p95));
  EXPECT_DOUBLE_EQ(c.algbw, 134.30);
  EXPECT_DOUBLE_EQ(c.busbwMedian, 235.03);
  EXPECT_EQ(imported.topology.nodes.size(), 1u);
  EXPECT_EQ(imported.topology.nodes[0].topologyClass, "UNCLASSIFIED");
}

TEST(NcclTestsImport, NewLayoutWithRootAndCheckedRows) {
  const NcclTestsLog log = parseFixture("gh200-2node-8gpu-allreduce-slingshot-cscs-alps.txt");
  const NcclTestsTable& t = log.tables.front();
  EXPECT_EQ(t.opSource, "log");
  EXPECT_EQ(t.iters, 20);
  EXPECT_EQ(t.warmup, 1);
  EXPECT_EQ(t.ranks[5].hostname, "nid005487");  // printed "on  nid005487"
  EXPECT_EQ(t.ranks[5].busId, "0019:01:00");
  EXPECT_EQ(t.ranks[5].gpuName, "NVIDIA GH200 120GB");
  const NcclTestsImport imported = importNcclTests({log});
  ASSERT_EQ(imported.topology.ranks.size(), 8u);
  EXPECT_EQ(imported.topology.ranks[5].node, 1);
  EXPECT_EQ(imported.topology.ranks[5].localRank, 1);
  EXPECT_EQ(imported.topology.ranks[5].gpuIndex, 1);
  const auto& [step, rows] = imported.steps[1];
  EXPECT_EQ(step.status, "ok");
  EXPECT_TRUE(rows.front().checked);
  EXPECT_EQ(rows.front().wrong, 0u);
  EXPECT_EQ(rows.front().root, -1);
  EXPECT_DOUBLE_EQ(rows.front().timeUs.mean, 17.72);
}


TEST(NcclTestsImport, LauncherPrefixesChatterAndCrlfReadTheSame) {
  for (const std::string& file : {kGh200, kA100}) {
    SCOPED_TRACE(file);
    const std::string text = slurp(kData / file);
    const std::string plain = summary(parseNcclTestsLog(text, file));
    int n = 0;
    const std::map<std::string, std::string> variants = {
        {"open mpi --tag-output", eachLine(text, [](const std::string& l) { return "[1,0]<stdout>:" + l; })},
        {"slurm --label", eachLine(text, [](const std::string& l) { return "0: " + l; })},
        {"intel mpi -prepend-rank", eachLine(text, [](const std::string& l) { return "[0] " + l; })},
        {"crlf", eachLine(text, [](const std::string& l) { return l + "\r"; })},
        {"nccl chatter and other output",
         eachLine(text, [&n](const std::string& l) {
           return l + "\nnid005471:204199:204230 [0] NCCL INFO Channel 0" + std::to_string(n++) +
                  "/0 : 0[0] -> 1[1] via P2P/IPC\n[1,3]<stderr>:nid005471:204202:204202 [3] NCCL WARN something\n"
                  "srun: Job step aborted? no\n\n";
         })},
    };
    for (const auto& [what, variant] : variants) {
      EXPECT_EQ(summary(parseNcclTestsLog(variant, file)), plain) << what;
    }
  }
}

TEST(NcclTestsImport, NcclVersionAndNcclTestsVersionAreKept) {
  const std::string text = "# nccl-tests version 2.17.1 nccl-headers=22603 nccl-library=22603\n"
                           "nid1:1:1 [0] NCCL INFO NCCL version 2.26.3+cuda12.8\n" +
                           slurp(kData / kGh200);
  const NcclTestsLog log = parseNcclTestsLog(text, "x.txt");
  EXPECT_EQ(log.ncclTestsVersion, "2.17.1");
  EXPECT_EQ(log.ncclVersion, "2.26.3+cuda12.8");
  const NcclTestsImport imported = importNcclTests({log});
  EXPECT_EQ(imported.ncclVersion, "2.26.3+cuda12.8");
  EXPECT_EQ(imported.imported.front().toolVersion, "2.17.1");
}

TEST(NcclTestsImport, UnreadableRowsNameFileAndLine) {
  const std::string text = slurp(kData / kGh200);
  // line 17 is the first row ("8 2 float sum -1 17.93 ...")
  auto lines = split(text, '\n');
  ASSERT_TRUE(lines[16].find("17.93") != std::string::npos);
  const auto withLine17 = [&](const std::string& replacement) {
    auto copy = lines;
    copy[16] = replacement;
    std::string out;
    for (std::size_t i = 0; i < copy.size(); ++i) out += copy[i] + (i + 1 < copy.size() ? "\n" : "");
    return out;
  };
  for (const std::string& bad : {
           std::string("           8             2     float     sum      -1    17.93    0.00    abc      0    17.72    0.00    0.00      0"),
           std::string("           8             2     float     sum      -1    17.93    0.00"),  // cut short
           std::string("           8             2     float     sum      -1    17.93    0.00    0.00      0    17.72    0.00    0.00      0   9"),
           std::string("           8             2     float     sum      -x    17.93    0.00    0.00      0    17.72    0.00    0.00      0"),
           std::string("           8             2     float     sum      -1    17.93    0.00    0.00     -1    17.72    0.00    0.00      0"),
           std::string("  99999999999999999999999  2     float     sum      -1    17.93    0.00    0.00      0    17.72    0.00    0.00      0"),
       }) {
    const std::string message = usageError([&] { parseNcclTestsLog(withLine17(bad), "cut.txt"); });
    EXPECT_TRUE(message.starts_with("cut.txt:17: ")) << bad << " -> " << message;
  }
  // the last row broken and the footer after it: the test ran to its end, the row is bad input
  ASSERT_TRUE(lines[40].find("1907.8") != std::string::npos);
  auto lastBroken = lines;
  lastBroken[40] = "   134217728      33554432     float     sum      -1   1916.4   70.04";
  std::string broken;
  for (const auto& l : lastBroken) broken += l + "\n";
  EXPECT_TRUE(usageError([&] { parseNcclTestsLog(broken, "cut.txt"); }).starts_with("cut.txt:41: table row has 7"));
}

TEST(NcclTestsImport, ImpossibleFiguresNameFileAndLineWhereverTheRowIs) {
  const auto lines = split(slurp(kData / kGh200), '\n');
  ASSERT_TRUE(lines[16].find("17.93") != std::string::npos);
  ASSERT_TRUE(lines[40].find("1907.8") != std::string::npos);
  const auto with = [&](std::size_t index, const std::string& replacement) {
    auto copy = lines;
    copy[index] = replacement;
    std::string out;
    for (std::size_t i = 0; i < copy.size(); ++i) out += copy[i] + (i + 1 < copy.size() ? "\n" : "");
    return out;
  };
  for (const std::string& bad : {
           std::string("           8             2     float     sum      -1      nan    0.00    0.00      0    17.72    0.00    0.00      0"),
           std::string("           8             2     float     sum      -1    17.93    0.00     inf      0    17.72    0.00    0.00      0"),
           std::string("           8             2     float     sum      -1   -17.93    0.00    0.00      0    17.72    0.00    0.00      0"),
           std::string("          -8             2     float     sum      -1    17.93    0.00    0.00      0    17.72    0.00    0.00      0"),
           std::string("           8             2     float     s\xffm     -1    17.93    0.00    0.00      0    17.72    0.00    0.00      0"),
       }) {
    // the first row, and the last one (a row no measurement prints is not a row cut short)
    for (const auto& at : {std::pair{std::size_t{16}, "cut.txt:17: "}, std::pair{std::size_t{40}, "cut.txt:41: "}}) {
      const std::string message = usageError([&] { parseNcclTestsLog(with(at.first, bad), "cut.txt"); });
      EXPECT_TRUE(message.starts_with(at.second)) << bad << " -> " << message;
    }
  }
}

TEST(NcclTestsImport, ALogEndingInsideARowKeepsTheWholeRowsBeforeIt) {
  const std::string text = slurp(kData / kGh200);
  // killed while the second row (line 18) was being printed
  const std::size_t cut = text.find("17.65");
  const NcclTestsLog log = parseNcclTestsLog(text.substr(0, cut + 2), "cut.txt");
  ASSERT_EQ(log.tables.size(), 1u);
  ASSERT_EQ(log.tables[0].rows.size(), 1u);
  EXPECT_EQ(log.tables[0].rows[0].bytes, 8u);
  EXPECT_TRUE(log.tables[0].truncated);
  ASSERT_EQ(log.warnings.size(), 1u);
  EXPECT_TRUE(log.warnings[0].starts_with("cut.txt:15: the log ends inside this table")) << log.warnings[0];
  EXPECT_NE(log.warnings[0].find("cut short at line 18"), std::string::npos) << log.warnings[0];
  // or cut in the middle of the first row: no whole row anywhere is an error naming the table
  const std::size_t first = text.find("17.93");
  EXPECT_TRUE(usageError([&] { parseNcclTestsLog(text.substr(0, first + 3), "cut.txt"); })
                  .starts_with("cut.txt:15: the table has no rows"));
}

TEST(NcclTestsImport, CutShortAfterWholeRowsImportsThemWithAWarning) {
  const std::string text = slurp(kData / kGh200);
  const NcclTestsLog log = parseNcclTestsLog(text.substr(0, text.find("# Out of bounds")), "cut.txt");
  ASSERT_EQ(log.tables.size(), 1u);
  EXPECT_EQ(log.tables[0].rows.size(), 25u);
  EXPECT_TRUE(std::isnan(log.tables[0].avgBusBandwidth));
  EXPECT_EQ(log.tables[0].avgBusBandwidthLine, "");
  ASSERT_EQ(log.warnings.size(), 1u);
  EXPECT_TRUE(log.warnings[0].starts_with("cut.txt:15: ")) << log.warnings[0];
}

TEST(NcclTestsImport, LogsWithoutATableOrRanksOrOpAreRefused) {
  EXPECT_TRUE(usageError([] { parseNcclTestsLog("", "empty.txt"); }).starts_with("empty.txt: no nccl-tests result table"));
  EXPECT_TRUE(usageError([] { parseNcclTestsLog("hello\nworld\n", "x.txt"); }).starts_with("x.txt: no nccl-tests"));
  const std::string text = slurp(kData / kGh200);
  // a header and no rows
  EXPECT_TRUE(usageError([&] { parseNcclTestsLog(text.substr(0, text.find("           8")), "h.txt"); })
                  .starts_with("h.txt:15: the table has no rows"));
  // no rank lines
  std::string noRanks = eachLine(text, [](const std::string& l) { return l.find("Rank ") != std::string::npos ? "" : l; });
  EXPECT_TRUE(usageError([&] { parseNcclTestsLog(noRanks, "r.txt"); }).starts_with("r.txt:15: no '#  Rank N"));
  // ranks out of order
  std::string swapped = text;
  swapped.replace(swapped.find("Rank  1 Group"), 7, "Rank  9");
  EXPECT_TRUE(usageError([&] { parseNcclTestsLog(swapped, "s.txt"); }).starts_with("s.txt:6: rank 9"));
  // several NCCL_TESTS_SPLIT groups
  std::string groups = text;
  groups.replace(groups.find("Rank  7 Group  0"), 16, "Rank  7 Group  1");
  EXPECT_TRUE(usageError([&] { parseNcclTestsLog(groups, "g.txt"); }).starts_with("g.txt:12: ranks in several groups"));
  // the op named nowhere: --op decides
  const std::string a100 = slurp(kData / kA100);
  EXPECT_TRUE(usageError([&] { parseNcclTestsLog(a100, "run1.log"); }).starts_with("run1.log:14: cannot tell which collective"));
  EXPECT_EQ(parseNcclTestsLog(a100, "run1.log", "all_gather").tables[0].op, "all_gather");
  EXPECT_EQ(parseNcclTestsLog(a100, "run1.log", "all_gather").tables[0].opSource, "--op");
  // or a command echoed before the table
  EXPECT_EQ(parseNcclTestsLog("+ srun ./build/reduce_scatter_perf -b 8 -e 8G -f 2\n" + a100, "run1.log").tables[0].op,
            "reduce_scatter");
  EXPECT_EQ(ncclTestsOp("gather_perf"), "gather");
  EXPECT_EQ(ncclTestsOp("allreduce"), "all_reduce");
  EXPECT_EQ(ncclTestsOp("nonsense"), "");
}

TEST(NcclTestsImport, LongLinesOfPerfWordsAreReadInLinearTime) {
  // each "_perf" looks back for a binary name: unbounded, a 600 KB line of them took minutes
  std::string line;
  for (int i = 0; i < 100000; ++i) line += "a_perf";
  const std::string text = line + "\n" + slurp(kData / kA100);
  EXPECT_EQ(parseNcclTestsLog(text, "long.log", "all_reduce").tables[0].opSource, "--op");
}

TEST(NcclTestsImport, WrongAndUncheckedRowsKeepTheirStatus) {
  std::string text = slurp(kData / kGh200);
  text.replace(text.find("17.93    0.00    0.00      0"), 28, "17.93    0.00    0.00      5");
  text.replace(text.find("17.72    0.00    0.00      0"), 28, "17.72    0.00    0.00    N/A");
  const std::string failed = [&] {
    std::string t = text;
    t.replace(t.find("0 OK"), 4, "1 FAILED");
    return t;
  }();
  const NcclTestsImport imported = importNcclTests({parseNcclTestsLog(failed, "w.txt")});
  EXPECT_EQ(imported.steps[0].first.status, "wrong");
  EXPECT_EQ(imported.steps[0].second.front().wrong, 5u);
  EXPECT_EQ(imported.steps[1].first.status, "unchecked");
  EXPECT_FALSE(imported.steps[1].second.front().checked);
  EXPECT_EQ(imported.steps[2].first.status, "ok");
  // the log's own verdict says 0 OK: nccl-tests did not judge that count, and neither does import
  const NcclTestsLog passed = parseNcclTestsLog(text, "w.txt");
  EXPECT_FALSE(passed.tables[0].rows[0].outOfPlace.checked);
  EXPECT_EQ(passed.tables[0].rows[0].outOfPlace.wrong, 0u);
  ASSERT_EQ(passed.warnings.size(), 1u);
  EXPECT_TRUE(passed.warnings[0].starts_with("w.txt:15: 1 result beyond")) << passed.warnings[0];
}

TEST(NcclTestsImport, SeveralTablesAndLogsNumberStepsInOrder) {
  const std::string gh = slurp(kData / kGh200);
  std::string gather = gh;
  gather.replace(gather.find("all_reduce_perf"), 15, "all_gather_perf");
  const NcclTestsLog both = parseNcclTestsLog(gh + gather, "both.txt");
  ASSERT_EQ(both.tables.size(), 2u);
  EXPECT_EQ(both.tables[1].op, "all_gather");
  EXPECT_EQ(both.tables[1].headerLine, 45 + 15);
  const NcclTestsImport imported = importNcclTests({parseNcclTestsLog(gh, "a.txt"), both});
  ASSERT_EQ(imported.imported.size(), 3u);
  EXPECT_EQ(imported.imported[0].firstStep, 0);
  EXPECT_EQ(imported.imported[0].lastStep, 49);
  EXPECT_EQ(imported.imported[2].file, "both.txt");
  EXPECT_EQ(imported.imported[2].op, "all_gather");
  EXPECT_EQ(imported.imported[2].firstStep, 100);
  EXPECT_EQ(imported.imported[2].lastStep, 149);
  for (std::size_t i = 0; i < imported.steps.size(); ++i) EXPECT_EQ(imported.steps[i].first.step, static_cast<int>(i));
  // logs of other ranks do not go into one file
  const std::string message = usageError([&] { importNcclTests({parseFixture(kGh200), parseFixture(kA100)}); });
  EXPECT_TRUE(message.find(kGh200 + ":15 and " + kA100 + ":14 were measured on different ranks") != std::string::npos)
      << message;
}

}  // namespace
}  // namespace fabricmap::results
