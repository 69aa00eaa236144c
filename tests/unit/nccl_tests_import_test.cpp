// nccl-tests log import: every real log in tests/data/nccl-tests gives the figures its labels.tsv
// row states; hostile variants (cut short, garbage, launcher prefixes, NCCL chatter, CRLF) are
// read the same or refused with "FILE:LINE"; `fabricmap import` writes a file show reads back.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "core/error.h"
#include "orchestrator/commands.h"
#include "orchestrator/compare.h"
#include "results/console.h"
#include "results/h5_reader.h"
#include "results/json.h"
#include "results/nccl_tests_log.h"

namespace fabricmap::results {
namespace {

namespace fs = std::filesystem;

const fs::path kData = fs::path(FABRICMAP_TEST_DATA) / "nccl-tests";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

// labels.tsv: a header row, then one row per fixture (fields may be quoted with "" escapes).
std::vector<std::map<std::string, std::string>> labels() {
  std::vector<std::map<std::string, std::string>> out;
  std::vector<std::string> header;
  for (std::string line : split(slurp(kData / "labels.tsv"), '\n')) {
    if (line.empty()) continue;
    auto fields = split(line, '\t');
    if (header.empty()) {
      header = fields;
      continue;
    }
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < fields.size() && i < header.size(); ++i) row[header[i]] = fields[i];
    out.push_back(row);
  }
  return out;
}

NcclTestsLog parseFixture(const std::string& file) { return parseNcclTestsLog(slurp(kData / file), file); }

// Applies `edit` to every line of `text` (lines without their '\n').
std::string eachLine(const std::string& text, const std::function<std::string(const std::string&)>& edit) {
  std::string out;
  auto lines = split(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  for (const auto& l : lines) out += edit(l) + "\n";
  return out;
}

// The message of the UsageError `f` throws ("" when it throws none).
template <class F>
std::string usageError(F f) {
  try {
    f();
  } catch (const core::UsageError& e) {
    return e.what();
  }
  return "";
}

// What matters of a parse for comparing a hostile variant with the plain log.
std::string summary(const NcclTestsLog& log) {
  std::string s;
  for (const auto& t : log.tables) {
    s += t.op + " " + std::to_string(t.ranks.size()) + " " + t.avgBusBandwidthLine + " " + t.outOfBounds + "\n";
    for (const auto& r : t.ranks) s += r.hostname + "/" + std::to_string(r.device) + "/" + r.busId + "/" + r.gpuName + "\n";
    for (const auto& r : t.rows) {
      s += fmt::format("{} {} {} {} {} {} {} {} {} {} {} {}\n", r.bytes, r.count, r.dtype, r.redop, r.root,
                       r.outOfPlace.timeUs, r.outOfPlace.busbw, r.outOfPlace.checked, r.inPlace.timeUs,
                       r.inPlace.algbw, r.inPlace.busbw, r.inPlace.wrong);
    }
  }
  return s;
}

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

const std::string kGh200 = "gh200-2node-8gpu-allreduce-slingshot-cscs-alps.txt";
const std::string kA100 = "a100-sxm4-8gpu-allreduce-superbench-testdata.txt";

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

// ---- one fixture per output generation (tests/data/nccl-tests/generations/README.md); every
// expected figure below is read off the fixture by hand, every bound worked out from nccl-tests'
// rule (common.cu of 2.0-2.12: wrong when the largest error > DeltaMaxValue(type) x (nranks - 1))

const fs::path kGenerations = kData / "generations";

NcclTestsLog parseGeneration(const std::string& file) { return parseNcclTestsLog(slurp(kGenerations / file), file); }

// One placement's figures as the fixture prints them.
void expectFigures(const NcclTestsFigures& f, double timeUs, double algbw, double busbw) {
  EXPECT_TRUE(f.printed);
  EXPECT_DOUBLE_EQ(f.timeUs, timeUs);
  EXPECT_DOUBLE_EQ(f.algbw, algbw);
  EXPECT_DOUBLE_EQ(f.busbw, busbw);
}

// (checked, wrong) of every row's out-of-place or in-place result, in row order.
std::vector<std::pair<bool, std::uint64_t>> verdicts(const NcclTestsTable& t, bool inPlace) {
  std::vector<std::pair<bool, std::uint64_t>> out;
  for (const auto& r : t.rows) {
    const NcclTestsFigures& f = inPlace ? r.inPlace : r.outOfPlace;
    out.emplace_back(f.checked, f.wrong);
  }
  return out;
}

std::vector<std::pair<bool, std::uint64_t>> all(std::size_t n, bool checked, std::uint64_t wrong = 0) {
  return std::vector<std::pair<bool, std::uint64_t>>(n, {checked, wrong});
}

std::vector<core::CollectiveRecord> records(const NcclTestsImport& imported) {
  std::vector<core::CollectiveRecord> out;
  for (const auto& [step, rows] : imported.steps) out.insert(out.end(), rows.begin(), rows.end());
  return out;
}

// `compare`'s peaks of a single-table log: (busbw, bytes) out-of-place and in-place.
orchestrator::CollectivePeak peakOfLog(const NcclTestsLog& log) {
  return orchestrator::peakOf(records(importNcclTests({log})), "world", log.tables.at(0).op);
}

void expectPeak(const orchestrator::PlacementPeak& p, double busbw, std::uint64_t bytes) {
  EXPECT_DOUBLE_EQ(p.busbw, busbw);
  EXPECT_EQ(p.bytes, bytes);
}

// Removes everything from `marker` on (a log killed before its footer).
std::string cutAt(std::string text, const std::string& marker) {
  const std::size_t at = text.find(marker);
  EXPECT_NE(at, std::string::npos) << marker;
  return text.substr(0, at);
}

constexpr std::uint64_t kMiB = 1ull << 20;
constexpr std::uint64_t kGiB = 1ull << 30;

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

class ImportCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fabricmap-import-test-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ImportCommandTest, WritesAFileShowReadsBack) {
  const std::string out = (dir_ / "imported.h5").string();
  const std::string gh = (kData / kGh200).string();
  ASSERT_EQ(orchestrator::importCommand({"nccl-tests", gh, "-o", out}), 0);
  const ResultsFile file = readResults(out);
  EXPECT_TRUE(file.complete);
  EXPECT_EQ(file.provenance.backend, "nccl-tests (imported)");
  EXPECT_EQ(file.provenance.importedFrom, "[\"" + gh + "\"]");
  EXPECT_EQ(file.provenance.worldSize, 8);
  EXPECT_EQ(file.provenance.nodeCount, 2);
  EXPECT_EQ(file.provenance.plannedSteps, 50);
  EXPECT_EQ(file.steps.size(), 50u);
  EXPECT_EQ(file.collectives.size(), 50u);
  EXPECT_DOUBLE_EQ(file.collectives.back().busbw, 123.11);
  ASSERT_EQ(file.imported.size(), 1u);
  EXPECT_EQ(file.imported[0].avgBusBandwidthLine, "# Avg bus bandwidth    : 19.7866");
  EXPECT_DOUBLE_EQ(file.imported[0].avgBusBandwidth, 19.7866);
  const auto json = toJson(file);
  EXPECT_EQ(json["imported"][0]["avg_bus_bandwidth_line"], "# Avg bus bandwidth    : 19.7866");
  EXPECT_EQ(json["provenance"]["imported_from"][0], gh);
  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* mem = open_memstream(&text, &size);
  printResults(mem, file);
  std::fclose(mem);
  const std::string shown(text, size);
  std::free(text);
  EXPECT_TRUE(shown.find("# imported from nccl-tests: " + gh) != std::string::npos) << shown;
  EXPECT_TRUE(shown.find("# Avg bus bandwidth    : 19.7866") != std::string::npos) << shown;
  // an existing file is kept unless --force
  EXPECT_TRUE(usageError([&] { orchestrator::importCommand({"nccl-tests", gh, "-o", out}); }).find("--force") !=
              std::string::npos);
  EXPECT_EQ(orchestrator::importCommand({"nccl-tests", gh, "-o", out, "--force"}), 0);
  // bad input leaves no file
  const std::string bad = (dir_ / "bad.h5").string();
  EXPECT_TRUE(usageError([&] { orchestrator::importCommand({"nccl-tests", (dir_ / "absent.txt").string(), "-o", bad}); })
                  .find("absent.txt: no such file") != std::string::npos);
  EXPECT_FALSE(usageError([&] { orchestrator::importCommand({"nccl-tests", gh, "-o", bad, "--op", "nope"}); }).empty());
  EXPECT_FALSE(usageError([&] { orchestrator::importCommand({"other-format", gh, "-o", bad}); }).empty());
  EXPECT_FALSE(fs::exists(bad));
}

TEST_F(ImportCommandTest, EveryGenerationImportsAndItsPeaksArePrinted) {
  for (const auto& entry : fs::directory_iterator(kGenerations)) {
    if (entry.path().extension() != ".log") continue;
    SCOPED_TRACE(entry.path().filename());
    const std::string out = (dir_ / (entry.path().stem().string() + ".h5")).string();
    testing::internal::CaptureStdout();
    const int rc = orchestrator::importCommand({"nccl-tests", entry.path().string(), "-o", out});
    const std::string printed = testing::internal::GetCapturedStdout();
    ASSERT_EQ(rc, 0);
    EXPECT_TRUE(readResults(out).complete);
    EXPECT_NE(printed.find("peak busbw out-of-place "), std::string::npos) << printed;
  }
  // what two of them print, by hand from the logs
  const std::string two = (kGenerations / "v2.13.0-blank-redop-two-tests.log").string();
  testing::internal::CaptureStdout();
  ASSERT_EQ(orchestrator::importCommand({"nccl-tests", two, "-o", (dir_ / "two.h5").string()}), 0);
  const std::string printed = testing::internal::GetCapturedStdout();
  EXPECT_NE(printed.find(two + ":40: alltoall (8 ranks), 6 rows 1 MiB..32 MiB, times -a 3 (slowest rank), out of "
                               "bounds 0 OK; peak busbw out-of-place 16.15 GB/s at 32 MiB, in-place 16.32 GB/s at "
                               "32 MiB"),
            std::string::npos) << printed;
  const ResultsFile file = readResults((dir_ / "two.h5").string());
  EXPECT_EQ(file.collectives.size(), 24u);
  EXPECT_EQ(file.imported.size(), 2u);
  const std::string failed = (kGenerations / "v2.17-all-reduce-wrong-counts-failed.log").string();
  testing::internal::CaptureStdout();
  ASSERT_EQ(orchestrator::importCommand({"nccl-tests", failed, "-o", (dir_ / "failed.h5").string()}), 0);
  EXPECT_NE(testing::internal::GetCapturedStdout().find(
                "out of bounds 3 FAILED, 3 wrong; peak busbw out-of-place 363.47 GB/s at 4 GiB, in-place 366.37 GB/s "
                "at 8 GiB"),
            std::string::npos);
  int wrong = 0;
  for (const auto& step : readResults((dir_ / "failed.h5").string()).steps) wrong += step.status == "wrong" ? 1 : 0;
  EXPECT_EQ(wrong, 3);
}

}  // namespace
}  // namespace fabricmap::results
