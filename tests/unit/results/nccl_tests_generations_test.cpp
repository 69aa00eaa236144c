// One fixture per nccl-tests output generation (2.0-2.19, rccl-tests): every figure read off the
// fixture by hand, wrongness judged as the log's own version judged it.
#include "tests/unit/results/nccl_tests_support.h"

namespace fabricmap::results {
namespace {

TEST(NcclTestsGenerations, ErrorBoundIsNcclTestsDeltaMaxValueTimesPeers) {
  EXPECT_DOUBLE_EQ(ncclTestsErrorBound("float", 16), 15e-5);
  EXPECT_DOUBLE_EQ(ncclTestsErrorBound("half", 4), 3e-2);
  EXPECT_DOUBLE_EQ(ncclTestsErrorBound("bfloat16", 2), 1e-2);
  EXPECT_DOUBLE_EQ(ncclTestsErrorBound("double", 8), 7e-12);
  EXPECT_DOUBLE_EQ(ncclTestsErrorBound("int32", 8), 7e-200);
  EXPECT_DOUBLE_EQ(ncclTestsErrorBound("float", 1), 0);
}

TEST(NcclTestsGenerations, V2_0AllGatherWithAnErrorColumn) {
  const NcclTestsLog log = parseGeneration("v2.0-all-gather-error-column.log");
  ASSERT_EQ(log.tables.size(), 1u);
  const NcclTestsTable& t = log.tables[0];
  EXPECT_EQ(t.op, "all_gather");
  EXPECT_EQ(t.opSource, "file name");
  EXPECT_EQ(t.check, NcclTestsCheck::kMaxError);
  EXPECT_EQ(t.iters, 20);
  EXPECT_EQ(t.warmup, 5);
  ASSERT_EQ(t.ranks.size(), 8u);
  EXPECT_EQ(t.ranks[4].hostname, "dgx1-07");
  EXPECT_EQ(t.ranks[4].busId, "0x85");
  EXPECT_EQ(t.ranks[4].gpuName, "Tesla V100-SXM2-16GB");
  ASSERT_EQ(t.rows.size(), 7u);
  EXPECT_EQ(t.rows[0].bytes, 1048576u);
  EXPECT_EQ(t.rows[0].count, 32768u);
  EXPECT_EQ(t.rows[0].redop, "none");
  EXPECT_EQ(t.rows[0].root, -1);
  expectFigures(t.rows[0].outOfPlace, 29.78, 30.81, 30.81);
  expectFigures(t.rows[6].inPlace, 508.3, 115.52, 115.52);
  EXPECT_EQ(verdicts(t, false), all(7, true));  // "0e+00" everywhere
  EXPECT_EQ(verdicts(t, true), all(7, true));
  EXPECT_DOUBLE_EQ(t.avgBusBandwidth, 80.7543);
  const auto peak = peakOfLog(log);
  expectPeak(peak.outOfPlace, 113.01, 64 * kMiB);
  expectPeak(peak.inPlace, 115.52, 64 * kMiB);
  EXPECT_TRUE(log.warnings.empty());
}

TEST(NcclTestsGenerations, V2_9AlltoallWithABlankRedopColumn) {
  // the user's log: 11 tokens per row under a 12-column header
  const NcclTestsLog log = parseGeneration("v2.9-alltoall-blank-redop-tag-output.log");
  const NcclTestsTable& t = log.tables.at(0);
  EXPECT_EQ(t.op, "alltoall");
  ASSERT_EQ(t.rows.size(), 8u);
  EXPECT_EQ(t.rows[3].bytes, 2097152u);
  EXPECT_EQ(t.rows[3].count, 65536u);
  EXPECT_EQ(t.rows[3].dtype, "float");
  EXPECT_EQ(t.rows[3].redop, "none");
  expectFigures(t.rows[7].outOfPlace, 1795.6, 18.69, 16.35);
  expectFigures(t.rows[7].inPlace, 1767.7, 18.98, 16.61);
  EXPECT_EQ(verdicts(t, false), all(8, true));
  // in-place errors of 6e+00 and 7e+00: nccl-tests never judges alltoall in place
  EXPECT_EQ(verdicts(t, true), all(8, false));
  const NcclTestsImport imported = importNcclTests({log});
  ASSERT_EQ(imported.topology.nodes.size(), 2u);
  EXPECT_EQ(imported.topology.nodes[1].hostname, "gpu-a02");
  EXPECT_EQ(imported.topology.ranks[5].gpuIndex, 1);
  EXPECT_EQ(imported.steps[1].first.status, "unchecked");
  EXPECT_EQ(imported.steps[0].first.status, "ok");
  const auto peak = peakOfLog(log);
  expectPeak(peak.outOfPlace, 16.35, 32 * kMiB);
  expectPeak(peak.inPlace, 16.61, 32 * kMiB);
  // killed before the footer: no verdict, the rule judges: out of place 0e+00 is fine, in place still not judged
  const NcclTestsLog cut = parseNcclTestsLog(cutAt(slurp(kGenerations / "v2.9-alltoall-blank-redop-tag-output.log"),
                                                   "[1,0]<stdout>:# Out of bounds"), "alltoall.log");
  EXPECT_TRUE(cut.tables.at(0).truncated);
  EXPECT_EQ(verdicts(cut.tables[0], false), all(8, true));
  EXPECT_EQ(verdicts(cut.tables[0], true), all(8, false));
}

TEST(NcclTestsGenerations, V2_10SendrecvWithoutRedopAndRoot) {
  const NcclTestsLog log = parseGeneration("v2.10-sendrecv-no-redop-root.log");
  const NcclTestsTable& t = log.tables.at(0);
  EXPECT_EQ(t.op, "sendrecv");
  ASSERT_EQ(t.rows.size(), 5u);
  EXPECT_EQ(t.rows[1].bytes, 4194304u);  // -f 4
  EXPECT_EQ(t.rows[1].redop, "none");
  EXPECT_EQ(t.rows[1].root, -1);
  expectFigures(t.rows[4].outOfPlace, 22761, 11.79, 11.79);
  expectFigures(t.rows[4].inPlace, 22955, 11.69, 11.69);
  EXPECT_EQ(verdicts(t, false), all(5, true));
  EXPECT_EQ(verdicts(t, true), all(5, false));  // 1e+00, 2e+00 printed, never judged
  const NcclTestsImport imported = importNcclTests({log});
  EXPECT_EQ(imported.topology.nodes.size(), 2u);
  const auto peak = peakOfLog(log);
  expectPeak(peak.outOfPlace, 11.79, 256 * kMiB);
  expectPeak(peak.inPlace, 11.69, 256 * kMiB);
}

TEST(NcclTestsGenerations, V2_10HealthyFloatErrorsAreNotWrong) {
  const std::string file = "v2.10-all-reduce-float-errors-slurm-label.log";
  const std::string text = slurp(kGenerations / file);
  const NcclTestsLog log = parseNcclTestsLog(text, file);
  const NcclTestsTable& t = log.tables.at(0);
  EXPECT_EQ(t.op, "all_reduce");
  EXPECT_EQ(t.opSource, "command");
  ASSERT_EQ(t.ranks.size(), 16u);
  EXPECT_EQ(t.ranks[9].hostname, "dgx-a02");
  ASSERT_EQ(t.rows.size(), 8u);
  EXPECT_EQ(*t.rows[0].outOfPlace.printedWrong, 5e-7);
  EXPECT_EQ(*t.rows[7].inPlace.printedWrong, 2e-6);
  expectFigures(t.rows[7].outOfPlace, 11245, 95.49, 179.04);
  expectFigures(t.rows[7].inPlace, 11185, 96.00, 180.00);
  // 2e-06 at most, against float's 1e-5 x 15 = 1.5e-4: nothing wrong, as the log says
  EXPECT_EQ(verdicts(t, false), all(8, true));
  EXPECT_EQ(verdicts(t, true), all(8, true));
  EXPECT_EQ(t.wrongResults, 0);
  const auto peak = peakOfLog(log);
  expectPeak(peak.outOfPlace, 179.04, kGiB);
  expectPeak(peak.inPlace, 180.00, kGiB);
  // the same values under a "#wrong" header (a count column holding fractions), and without the footer
  std::string wrongHeader = text;
  for (std::size_t at; (at = wrongHeader.find("busbw  error")) != std::string::npos;) {
    wrongHeader.replace(at, 12, "busbw #wrong");
  }
  for (const std::string& variant : {wrongHeader, cutAt(text, "0: # Out of bounds")}) {
    const NcclTestsLog v = parseNcclTestsLog(variant, file);
    EXPECT_EQ(v.tables.at(0).check, NcclTestsCheck::kMaxError);
    EXPECT_EQ(v.tables[0].wrongResults, 0);
    EXPECT_EQ(verdicts(v.tables[0], false), all(8, true));
  }
}

TEST(NcclTestsGenerations, V2_11HalfErrorsBeyondTheBoundAreWrong) {
  const std::string file = "v2.11-reduce-scatter-half-errors-failed.log";
  const std::string text = slurp(kGenerations / file);
  const NcclTestsLog log = parseNcclTestsLog(text, file);
  const NcclTestsTable& t = log.tables.at(0);
  EXPECT_EQ(t.op, "reduce_scatter");
  EXPECT_EQ(t.outOfBounds, "3 FAILED");
  ASSERT_EQ(t.rows.size(), 8u);
  EXPECT_EQ(t.rows[0].dtype, "half");
  // half's bound with 4 ranks: 1e-2 x 3 = 3e-02; 4e-02 (1 MiB), 2e+00 and 3e+00 (4 MiB) are beyond it
  std::vector<std::pair<bool, std::uint64_t>> oop = all(8, true), ip = all(8, true);
  oop[4] = {true, 1};
  oop[6] = {true, 1};
  ip[6] = {true, 1};
  EXPECT_EQ(verdicts(t, false), oop);
  EXPECT_EQ(verdicts(t, true), ip);
  EXPECT_EQ(t.wrongResults, 3);
  const NcclTestsImport imported = importNcclTests({log});
  EXPECT_EQ(imported.steps[8].first.status, "wrong");  // row 5 (1 MiB) out of place
  EXPECT_EQ(imported.steps[9].first.status, "ok");
  const auto peak = peakOfLog(log);
  expectPeak(peak.outOfPlace, 6.96, 8 * kMiB);
  expectPeak(peak.inPlace, 6.88, 8 * kMiB);
  // 3e-02 printed may have been up to 3.5e-02: wrong under the log's FAILED, not by the rule alone
  std::string borderline = text;
  borderline.replace(borderline.find("4.65  2e-02"), 11, "4.65  3e-02");
  EXPECT_EQ(parseNcclTestsLog(borderline, file).tables.at(0).wrongResults, 4);
  const NcclTestsLog cut = parseNcclTestsLog(cutAt(borderline, "# Out of bounds"), file);
  EXPECT_EQ(cut.tables.at(0).wrongResults, 3);
  EXPECT_EQ(cut.tables[0].rows[3].outOfPlace.wrong, 0u);
}

TEST(NcclTestsGenerations, V2_13_0BlankRedopAndTwoTestsInOneLog) {
  const NcclTestsLog log = parseGeneration("v2.13.0-blank-redop-two-tests.log");
  ASSERT_EQ(log.tables.size(), 2u);
  const NcclTestsTable& gather = log.tables[0];
  const NcclTestsTable& a2a = log.tables[1];
  EXPECT_EQ(gather.op, "all_gather");
  EXPECT_EQ(gather.opSource, "command");
  EXPECT_EQ(gather.average, -1);
  EXPECT_EQ(a2a.op, "alltoall");
  EXPECT_EQ(a2a.average, 3);  // "-a 3" on its command line
  EXPECT_EQ(a2a.headerLine, 40);
  for (const NcclTestsTable* t : {&gather, &a2a}) {
    ASSERT_EQ(t->rows.size(), 6u);
    EXPECT_EQ(t->check, NcclTestsCheck::kCount);
    EXPECT_EQ(t->rows[2].redop, "none");
    EXPECT_EQ(t->rows[2].root, -1);
    EXPECT_EQ(verdicts(*t, false), all(6, true));
  }
  EXPECT_EQ(verdicts(gather, true), all(6, true));
  // 2.13.0 prints alltoall's in-place count (229376 ... 7.34003e+06): not judged, as nccl-tests does
  EXPECT_DOUBLE_EQ(*a2a.rows[3].inPlace.printedWrong, 1.83501e+06);
  EXPECT_EQ(verdicts(a2a, true), all(6, false));
  expectFigures(a2a.rows[5].outOfPlace, 1818.0, 18.46, 16.15);
  const NcclTestsImport imported = importNcclTests({log});
  EXPECT_EQ(imported.steps.size(), 24u);
  EXPECT_EQ(imported.imported[1].firstStep, 12);
  const auto gatherPeak = orchestrator::peakOf(records(imported), "world", "all_gather");
  expectPeak(gatherPeak.outOfPlace, 17.93, 32 * kMiB);
  expectPeak(gatherPeak.inPlace, 18.27, 32 * kMiB);
  const auto a2aPeak = orchestrator::peakOf(records(imported), "world", "alltoall");
  expectPeak(a2aPeak.outOfPlace, 16.15, 32 * kMiB);
  expectPeak(a2aPeak.inPlace, 16.32, 32 * kMiB);
}

TEST(NcclTestsGenerations, V2_13_4BroadcastUncheckedWithRootAndNone) {
  const NcclTestsLog log = parseGeneration("v2.13.4-broadcast-none-unchecked-prepend-rank.log");
  const NcclTestsTable& t = log.tables.at(0);
  EXPECT_EQ(t.op, "broadcast");
  ASSERT_EQ(t.ranks.size(), 4u);
  EXPECT_EQ(t.ranks[2].hostname, "h100-2");
  EXPECT_EQ(t.ranks[3].busId, "0x3b");
  EXPECT_EQ(t.ranks[3].gpuName, "NVIDIA H100 80GB HBM3");
  ASSERT_EQ(t.rows.size(), 6u);  // the NCCL INFO line inside the table is not a row
  EXPECT_EQ(t.rows[2].bytes, 134217728u);
  EXPECT_EQ(t.rows[2].redop, "none");
  EXPECT_EQ(t.rows[2].root, 0);
  expectFigures(t.rows[5].outOfPlace, 24448, 43.92, 43.92);
  expectFigures(t.rows[5].inPlace, 24282, 44.22, 44.22);
  EXPECT_FALSE(t.rows[0].outOfPlace.printedWrong.has_value());  // N/A
  EXPECT_EQ(verdicts(t, false), all(6, false));
  EXPECT_EQ(verdicts(t, true), all(6, false));
  const NcclTestsImport imported = importNcclTests({log});
  for (const auto& [step, rows] : imported.steps) EXPECT_EQ(step.status, "unchecked");
  const auto peak = peakOfLog(log);
  expectPeak(peak.outOfPlace, 43.92, kGiB);
  expectPeak(peak.inPlace, 44.22, kGiB);
}

TEST(NcclTestsGenerations, V2_17WrongCountsAndAFailedAverage) {
  const NcclTestsLog log = parseGeneration("v2.17-all-reduce-wrong-counts-failed.log");
  EXPECT_EQ(log.ncclTestsVersion, "2.17.6");
  const NcclTestsTable& t = log.tables.at(0);
  EXPECT_EQ(t.op, "all_reduce");
  EXPECT_EQ(t.opSource, "log");
  EXPECT_EQ(t.ranks[7].busId, "0000:db:00");
  ASSERT_EQ(t.rows.size(), 8u);
  std::vector<std::pair<bool, std::uint64_t>> oop = all(8, true), ip = all(8, true);
  oop[4] = {true, 12};       // 1 GiB
  ip[5] = {true, 1048580};   // 2 GiB: "1.04858e+06"
  oop[7] = {true, 3};        // 8 GiB
  EXPECT_EQ(verdicts(t, false), oop);
  EXPECT_EQ(verdicts(t, true), ip);
  EXPECT_EQ(t.outOfBounds, "3 FAILED");
  EXPECT_DOUBLE_EQ(t.avgBusBandwidth, 357.442);
  EXPECT_EQ(t.avgBusBandwidthLine, "# Avg bus bandwidth    : 357.442 FAILED");
  expectFigures(t.rows[5].outOfPlace, 10354.4, 207.40, 362.95);
  // the largest out-of-place busbw (363.74 at 8 GiB) is a wrong row: the peak is the next, 4 GiB
  const auto peak = peakOfLog(log);
  expectPeak(peak.outOfPlace, 363.47, 4 * kGiB);
  expectPeak(peak.inPlace, 366.37, 8 * kGiB);
}

TEST(NcclTestsGenerations, V2_18KilledInTheMiddleOfARow) {
  const std::string file = "v2.18-cputime-killed-mid-row.log";
  const NcclTestsLog log = parseGeneration(file);
  const NcclTestsTable& t = log.tables.at(0);
  EXPECT_EQ(t.op, "all_gather");
  EXPECT_TRUE(t.truncated);
  EXPECT_EQ(t.outOfBounds, "");
  EXPECT_TRUE(std::isnan(t.avgBusBandwidth));
  ASSERT_EQ(t.rows.size(), 9u);  // 1 MiB..256 MiB; 512 MiB has its out-of-place half only
  EXPECT_EQ(t.rows.back().bytes, 256 * kMiB);
  expectFigures(t.rows.back().outOfPlace, 6745.89, 39.79, 37.31);  // "cputime" columns
  EXPECT_EQ(verdicts(t, false), all(9, true));
  ASSERT_EQ(log.warnings.size(), 1u);
  EXPECT_TRUE(log.warnings[0].starts_with(file + ":24: the log ends inside this table")) << log.warnings[0];
  EXPECT_NE(log.warnings[0].find("its 9 whole rows are imported (the row cut short at line 35 is left out)"),
            std::string::npos) << log.warnings[0];
  const auto peak = peakOfLog(log);
  expectPeak(peak.outOfPlace, 37.31, 256 * kMiB);
  expectPeak(peak.inPlace, 37.59, 256 * kMiB);
}

TEST(NcclTestsGenerations, V2_19PerIterationColumnsAndTimestamps) {
  const NcclTestsLog log = parseGeneration("v2.19-per-iteration-timestamps.log");
  EXPECT_EQ(log.ncclTestsVersion, "2.19.6");
  EXPECT_EQ(log.ncclVersion, "2.29.3+cuda13.0");
  const NcclTestsTable& t = log.tables.at(0);
  EXPECT_EQ(t.op, "reduce_scatter");
  ASSERT_EQ(t.rows.size(), 6u);
  const NcclTestsRow& first = t.rows[0];
  expectFigures(first.outOfPlace, 362.64, 46.26, 40.48);
  EXPECT_DOUBLE_EQ(first.outOfPlace.iterMinUs, 351.76);
  EXPECT_DOUBLE_EQ(first.outOfPlace.iterMaxUs, 384.40);
  EXPECT_DOUBLE_EQ(first.outOfPlace.iterCvPercent, 1.20);
  expectFigures(first.inPlace, 359.18, 46.71, 40.87);
  EXPECT_DOUBLE_EQ(first.inPlace.iterMaxUs, 380.73);
  expectFigures(t.rows[5].inPlace, 10284.6, 52.20, 45.68);
  EXPECT_EQ(verdicts(t, false), all(6, true));
  EXPECT_EQ(verdicts(t, true), all(6, true));
  const NcclTestsImport imported = importNcclTests({log});
  const core::CollectiveRecord& c = imported.steps[1].second.front();  // row 1 in place
  EXPECT_DOUBLE_EQ(c.timeUs.min, 348.40);
  EXPECT_DOUBLE_EQ(c.timeUs.max, 380.73);
  EXPECT_DOUBLE_EQ(c.timeUs.mean, 359.18);
  EXPECT_DOUBLE_EQ(c.timeUs.cv, 0.012);
  const auto peak = peakOfLog(log);
  expectPeak(peak.outOfPlace, 45.32, 512 * kMiB);
  expectPeak(peak.inPlace, 45.68, 512 * kMiB);
}

TEST(NcclTestsGenerations, RcclTestsInPlaceOnly) {
  const NcclTestsLog log = parseGeneration("rccl-tests-all-reduce-in-place-only.log");
  const NcclTestsTable& t = log.tables.at(0);
  EXPECT_EQ(t.op, "all_reduce");
  EXPECT_EQ(t.ranks[0].busId, "0000:05:00.0");
  ASSERT_EQ(t.rows.size(), 5u);
  EXPECT_FALSE(t.rows[0].outOfPlace.printed);
  expectFigures(t.rows[4].inPlace, 1607.0, 167.04, 292.32);
  EXPECT_EQ(t.rows[4].dtype, "bfloat16");
  EXPECT_EQ(verdicts(t, true), all(5, true));
  const NcclTestsImport imported = importNcclTests({log});
  ASSERT_EQ(imported.steps.size(), 5u);  // in place only
  for (const auto& [step, rows] : imported.steps) EXPECT_TRUE(step.inPlace);
  const auto peak = peakOfLog(log);
  EXPECT_TRUE(std::isnan(peak.outOfPlace.busbw));
  expectPeak(peak.inPlace, 292.32, 256 * kMiB);
}

TEST(NcclTestsGenerations, OldRcclTestsAsteriskMarksAWrongResult) {
  // rccl-tests 2019-2022 printed "%5.0le%s" with "*" for an error beyond its bound
  std::string text = slurp(kGenerations / "v2.10-all-reduce-float-errors-slurm-label.log");
  text.replace(text.find("1e-06    231.9"), 14, "1e-06*   231.9");
  text.replace(text.find("0 OK"), 4, "1 FAILED");
  const NcclTestsTable t = parseNcclTestsLog(text, "all_reduce.log").tables.at(0);
  EXPECT_EQ(t.rows[1].outOfPlace.wrong, 1u);
  EXPECT_EQ(t.wrongResults, 1);
}

TEST(NcclTestsGenerations, ProcessesEachRunningTheirOwnTestAreNamed) {
  // nccl-tests built without MPI=1 under mpirun -np 2 (nccl-tests issue 107): two headers, two rank 0s
  const std::string header = "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 "
                             "validation: 1\n#\n# Using devices\n";
  const std::string text =
      header + header +
      "#   Rank  0 Pid   1320 on ip-172-31-20-228 device  0 [0x00] Tesla V100-SXM2-16GB\n"
      "#   Rank  0 Pid   2066 on ip-172-31-22-230 device  0 [0x00] Tesla V100-SXM2-16GB\n"
      "#\n#       size         count      type   redop     time   algbw   busbw  error"
      "     time   algbw   busbw  error\n"
      "           8             2     float     sum    10.00    0.00    0.00  0e+00    10.00    0.00    0.00  0e+00\n";
  const std::string message = usageError([&] { parseNcclTestsLog(text, "np2.log", "all_reduce"); });
  EXPECT_TRUE(message.starts_with("np2.log:8: rank 0 is listed again (first at line 7)")) << message;
  EXPECT_NE(message.find("MPI=1"), std::string::npos) << message;
}

TEST(NcclTestsGenerations, EveryGenerationIsAFuzzSeed) {
  const fs::path corpus = fs::path(FABRICMAP_TEST_DATA) / ".." / "fuzz" / "corpus" / "nccl_tests";
  for (const auto& entry : fs::directory_iterator(kGenerations)) {
    if (entry.path().extension() != ".log") continue;
    EXPECT_EQ(slurp(corpus / entry.path().filename()), slurp(entry.path())) << entry.path().filename();
  }
}

}  // namespace
}  // namespace fabricmap::results
