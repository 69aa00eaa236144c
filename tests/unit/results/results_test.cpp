// Results file: every dataset and attribute written by the sink reads back equal; incomplete and
// foreign files are recognised; JSON and console output carry the same records.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "core/error.h"
#include "results/console.h"
#include "results/h5.h"
#include "results/h5_reader.h"
#include "results/h5_writer.h"
#include "results/journal.h"
#include "results/json.h"
#include "results/schema.h"

namespace fabricmap::results {
namespace {

using Rows = std::vector<core::CollectiveRecord>;

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() : path_(fs::temp_directory_path() / ("fabricmap-test-" + std::to_string(getpid()) + "-" +
                                                 std::to_string(counter_++))) {
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

core::Provenance sampleProvenance() {
  core::Provenance p;
  p.toolVersion = "9.8.7";
  p.gitRevision = "abc123-dirty";
  p.createdUtc = "2026-12-02T10:00:00Z";
  p.commandLine = "fabricmap run -b 8 -e 'a b'";
  p.backend = "mpi";
  p.mpiVersion = "Open MPI v4.1.4";
  p.ncclVersion = "2.28.9";
  p.cudaRuntimeVersion = "13.0";
  p.cudaDriverVersion = "none";
  p.slurmJobId = "4242";
  p.slurmNodelist = "gpu[01-02]";
  p.hostnames = "gpu01,gpu02";
  p.worldSize = 3;
  p.nodeCount = 2;
  p.emulated = true;
  p.ranksPerNode = 2;
  p.plannedSteps = 2;
  p.runConfig = R"({"suite":"quick","iters":20})";
  return p;
}

core::Topology sampleTopology() {
  core::Topology t;
  t.emulated = true;
  t.ranksPerNode = 2;
  for (int r = 0; r < 3; ++r) {
    core::RankRecord rec;
    rec.rank = r;
    rec.node = r / 2;
    rec.localRank = r % 2;
    rec.hostname = r < 2 ? "gpu01" : "gpu02";
    rec.cpu = 10 + r;
    rec.numaNode = r % 2;
    rec.gpuIndex = r % 2;
    rec.gpuUuid = "GPU-" + std::to_string(r);
    rec.gpuName = "NVIDIA H100 80GB HBM3";
    rec.gpuBusId = "00000000:1" + std::to_string(r) + ":00.0";
    rec.gpuMemoryBytes = 85899345920ull + static_cast<std::uint64_t>(r);
    rec.nic = "mlx5_" + std::to_string(r);
    rec.cpus = r == 0 ? "0-7,64-71" : "";
    rec.nearGpu = r == 0 ? "yes" : "";
    rec.nearNic = r == 0 ? "partly" : "";
    t.ranks.push_back(rec);
  }
  for (int n = 0; n < 2; ++n) {
    core::NodeRecord node;
    node.node = n;
    node.name = "gpu0" + std::to_string(n + 1);
    node.hostname = node.name;
    node.ranks = n == 0 ? 2 : 1;
    node.gpus = 8;
    node.memAvailableBytes = 1ull << (40 + n);
    node.nics = "mlx5_0:400";
    node.topologyClass = n == 0 ? "FULL_NVSWITCH" : "NVLINK_PAIRS";
    node.nvswitch = n == 0 ? "yes" : "no";
    node.topologyWarnings = n == 0 ? "" : "GPU1: NIC path crosses the CPU (SYS)";
    if (n == 1) node.gpuLinks = {"X", "NV4", "NV4", "X"};
    t.nodes.push_back(node);
  }
  t.inventory.nics = {{0, "mlx5_0", 1, "rdma", "ACTIVE", "LinkUp", 400, 4, "NDR", "IB", "ib0", "0000:1a:00.0", 0},
                      {1, "eth0", 0, "ethernet", "up", "", 25, 0, "", "Ethernet", "eth0", "0000:3b:00.0", 1}};
  t.inventory.pcie = {{0, "GPU", "0000:18:00.0", true, 32, 32, 8, 16, 32, 16, 0, "0-55,112-167"}};
  t.inventory.nodes = {{0, 8, "no", "no peer-memory module", ""}, {1, 0, "unknown", "no GPU", "no sysfs here"}};
  t.inventory.gpus = {{0, 0, "0000:18:00.0", "NVIDIA H100 80GB HBM3", 85899345920ull, 0, "mlx5_0", "PIX", "yes", "yes",
                       -1, -1, "unknown", 0, 2, "yes", "no"},
                      {1, 3, "0000:9d:00.0", "", 0, -1, "", "", "unknown", "unknown", 1, 0, "no", -1, -1, "unknown",
                       "unknown"}};
  return t;
}

// What a run records at its end: the ports' counters (one grew by 3) and how UCX reached the peers.
core::InventoryRows sampleEnd() {
  core::InventoryRows end;
  end.counters = {{0, "mlx5_0", 1, "symbol_error", 5, 8}, {0, "mlx5_0", 1, "link_downed", 0, 0}};
  end.endpoints = {{0, "1", "self/memory0 (am, am_bw); cma/memory (rma_bw); tag rendezvous from 8192 B"},
                   {0, "2", "tcp/eth0 (am, am_bw, rma_bw); tag rendezvous from 8192 B"}};
  return end;
}

core::CollectiveRecord sampleRow(int step, int group, bool inPlace) {
  core::CollectiveRecord r;
  r.step = step;
  r.scope = "intra";
  r.group = group;
  r.ranks = group == 0 ? "0-1" : "2-3";
  r.nranks = 2;
  r.op = "all_reduce";
  r.dtype = "float";
  r.redop = "sum";
  r.root = -1;
  r.inPlace = inPlace;
  r.bytes = 1048576;
  r.count = 262144;
  r.iters = 20;
  r.warmup = 2;
  r.timeUs = {100.5, 110.25, 111.0, 130.75, 128.5, 0.0625};
  r.algbw = 9.4466;
  r.busbw = 9.4466;
  r.algbwMedian = 9.51;
  r.busbwMedian = 9.52;
  r.checked = true;
  r.wrong = group == 1 ? 3 : 0;
  r.wrongRanks = group == 1 ? "3" : "";
  return r;
}

core::StepRecord sampleStep(int step, bool inPlace, const char* status) {
  core::StepRecord s;
  s.step = step;
  s.kind = core::StepKind::kCollective;
  s.scope = "intra";
  s.op = "all_reduce";
  s.dtype = "float";
  s.redop = "sum";
  s.bytes = 1048576;
  s.inPlace = inPlace;
  s.groups = 2;
  s.status = status;
  s.reason = std::string(status) == "waived" ? "because" : "";
  s.seconds = 0.125 + step;
  return s;
}

template <class R>
void expectSameRecords(const std::vector<Column<R>>& columns, const R& a, const R& b) {
  for (const auto& c : columns) EXPECT_EQ(c.get(a), c.get(b)) << "column " << c.name;
}

// Every row of every /inventory table, `end`'s counters and endpoints for those tables.
void expectSameInventory(const core::InventoryRows& read, core::InventoryRows written,
                         const core::InventoryRows& end) {
  written.counters = end.counters;
  written.endpoints = end.endpoints;
  forEachInventoryTable([&](const char* path, const char*, const auto& columns, auto member) {
    ASSERT_EQ((read.*member).size(), (written.*member).size()) << path;
    for (std::size_t i = 0; i < (read.*member).size(); ++i) {
      expectSameRecords(columns, (read.*member)[i], (written.*member)[i]);
    }
  });
}

TEST(ResultsFile, EveryDatasetRoundTrips) {
  TempDir dir;
  const std::string path = dir.file("run.h5");
  const core::Provenance prov = sampleProvenance();
  const core::Topology topo = sampleTopology();
  const std::vector<core::ScopeRecord> scopes{{"world", 1, "0-2", "active", ""},
                                              {"inter", 0, "", "waived", "one node"}};
  {
    H5Sink sink(path);
    sink.begin(prov, topo, scopes);
    sink.step(sampleStep(0, false, "ok"), Rows{sampleRow(0, 0, false), sampleRow(0, 1, false)});
    sink.step(sampleStep(1, true, "waived"), Rows{});
    sink.inventoryEnd(sampleEnd());
    sink.finish(true);
  }
  const ResultsFile f = readResults(path);
  EXPECT_TRUE(f.complete);
  expectSameInventory(f.topology.inventory, topo.inventory, sampleEnd());
  expectSameRecords(provenanceColumns(), f.provenance, prov);
  ASSERT_EQ(f.topology.ranks.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) expectSameRecords(rankColumns(), f.topology.ranks[i], topo.ranks[i]);
  ASSERT_EQ(f.topology.nodes.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    expectSameRecords(nodeColumns(), f.topology.nodes[i], topo.nodes[i]);
    EXPECT_EQ(f.topology.nodes[i].gpuLinks, topo.nodes[i].gpuLinks);
  }
  EXPECT_TRUE(f.topology.emulated);
  ASSERT_EQ(f.scopes.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) expectSameRecords(scopeColumns(), f.scopes[i], scopes[i]);
  ASSERT_EQ(f.steps.size(), 2u);
  expectSameRecords(stepColumns(), f.steps[0], sampleStep(0, false, "ok"));
  expectSameRecords(stepColumns(), f.steps[1], sampleStep(1, true, "waived"));
  ASSERT_EQ(f.collectives.size(), 2u);
  expectSameRecords(collectiveColumns(), f.collectives[0], sampleRow(0, 0, false));
  expectSameRecords(collectiveColumns(), f.collectives[1], sampleRow(0, 1, false));
}

TEST(ResultsFile, UnfinishedRunIsIncompleteButReadable) {
  TempDir dir;
  const std::string path = dir.file("partial.h5");
  {
    H5Sink sink(path);
    sink.begin(sampleProvenance(), sampleTopology(), {});
    sink.step(sampleStep(0, false, "ok"), Rows{sampleRow(0, 0, false)});
    // no finish(): the process died here
  }
  const ResultsFile f = readResults(path);
  EXPECT_FALSE(f.complete);
  EXPECT_EQ(f.steps.size(), 1u);
  EXPECT_EQ(f.collectives.size(), 1u);
  std::FILE* out = std::tmpfile();
  printResults(out, f);
  std::rewind(out);
  std::string text(1 << 16, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), out));
  std::fclose(out);
  EXPECT_NE(text.find("INCOMPLETE: 1 of 2 planned steps recorded; missing steps 1"), std::string::npos) << text;
}

// A run whose writer died: the journal beside the file holds every whole step, and readers take
// the run from it; a step cut off in the middle of its lines is not there at all.
TEST(ResultsFile, JournalKeepsWholeStepsOfARunThatDied) {
  TempDir dir;
  const std::string path = dir.file("died.h5");
  core::Finding hang;
  hang.kind = core::FindingKind::kHang;
  hang.rank = 2;
  hang.measured = std::nan("");
  {
    JournalSink journal(path);
    journal.begin(sampleProvenance(), sampleTopology(), {{"world", 1, "0-2", "active", ""}});
    journal.step(sampleStep(0, false, "ok"), Rows{sampleRow(0, 0, false), sampleRow(0, 1, false)});
    journal.step(sampleStep(1, true, "waived"), Rows{});
    journal.planExtended(5);
    journal.finding(hang);
    journal.inventoryEnd(sampleEnd());
    // no finish(): killed
  }
  // a third step cut short: its rows arrived, its step line only in part
  {
    std::ofstream cut(journalPath(path), std::ios::app);
    cut << R"({"t":"row","step":2,"group":0,"wrong":0})" << "\n" << R"({"t":"step","step":2,"ki)";
  }
  const ResultsFile f = readResults(path);  // no HDF5 file at all: the journal is the run
  EXPECT_FALSE(f.complete);
  EXPECT_EQ(f.recoveredFrom, journalPath(path));
  expectSameRecords(provenanceColumns(), f.provenance, [] {
    core::Provenance p = sampleProvenance();
    p.plannedSteps = 5;
    return p;
  }());
  ASSERT_EQ(f.topology.ranks.size(), 3u);
  expectSameRecords(rankColumns(), f.topology.ranks[2], sampleTopology().ranks[2]);
  EXPECT_EQ(f.topology.nodes[1].gpuLinks, sampleTopology().nodes[1].gpuLinks);
  expectSameInventory(f.topology.inventory, sampleTopology().inventory, sampleEnd());
  ASSERT_EQ(f.steps.size(), 2u);
  expectSameRecords(stepColumns(), f.steps[1], sampleStep(1, true, "waived"));
  ASSERT_EQ(f.collectives.size(), 2u);  // step 2's row is not kept without its step line
  expectSameRecords(collectiveColumns(), f.collectives[1], sampleRow(0, 1, false));
  ASSERT_EQ(f.findings.size(), 1u);
  EXPECT_EQ(f.findings[0].kind, core::FindingKind::kHang);
  EXPECT_TRUE(std::isnan(f.findings[0].measured));
  // a clean end removes the journal: the HDF5 file is read again
  {
    H5Sink sink(path);
    JournalSink journal(path);
    sink.begin(sampleProvenance(), sampleTopology(), {});
    journal.begin(sampleProvenance(), sampleTopology(), {});
    sink.finish(true);
    journal.finish(true);
  }
  EXPECT_FALSE(fs::exists(journalPath(path)));
  EXPECT_TRUE(readResults(path).recoveredFrom.empty());
  // a journal beside a complete file is stale (another run's, or one killed before it removed its
  // own): the complete file is read, never the journal
  std::ofstream(journalPath(path)) << "garbage\n";
  EXPECT_TRUE(readResults(path).recoveredFrom.empty());
  EXPECT_TRUE(readResults(path).complete);
  // beside a file not complete, the journal is the run: one that is not a journal is refused, not half-read
  {
    H5Sink sink(path);
    sink.begin(sampleProvenance(), sampleTopology(), {});
    sink.finish(false);
  }
  std::ofstream(journalPath(path)) << "garbage\n";
  EXPECT_THROW(readResults(path), core::UsageError);
  // a journal's line is bounded: a sparse file of zeros is refused without being read whole
  {
    std::ofstream(journalPath(path), std::ios::trunc) << "";
  }
  fs::resize_file(journalPath(path), std::uintmax_t{10} << 30);  // 10 GiB, no block written
  try {
    readResults(path);
    ADD_FAILURE() << "a 10 GiB line was taken for a journal";
  } catch (const core::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("line 1 is longer than"), std::string::npos) << e.what();
  }
}

// Found by fuzzing: numbers of the wrong kind and a type that is not text are a damaged journal
// (a UsageError naming the line), so is a finding kind or severity fabricmap does not know, and
// text that is not UTF-8 (a command line) is journaled anyway.
TEST(ResultsFile, DamagedJournalLinesAreUsageErrorsAndAnyTextIsJournaled) {
  TempDir dir;
  const std::string path = dir.file("odd.h5");
  core::Provenance p = sampleProvenance();
  p.commandLine = "fabricmap run -o \xff\xfe.h5";
  {
    JournalSink journal(path);
    journal.begin(p, sampleTopology(), {});
    journal.step(sampleStep(0, false, "ok"), Rows{sampleRow(0, 0, false)});
  }
  const ResultsFile f = readResults(path);
  EXPECT_EQ(f.steps.size(), 1u);
  EXPECT_NE(f.provenance.commandLine.find("fabricmap run -o "), std::string::npos);
  // the line after what the journal holds now
  std::ifstream whole(journalPath(path));
  const auto lines = std::count(std::istreambuf_iterator<char>(whole), std::istreambuf_iterator<char>(), '\n');
  const std::string damagedAt = fmt::format("is damaged at line {}", lines + 1);
  for (const char* bad : {R"({"t":"step","step":5.5e46})", R"({"t":"step","step":-1,"bytes":-5})",
                          R"({"t":"planned","steps":"many"})", R"({"t":7})", R"({"t":"node","gpu_links":3})",
                          R"({"t":"finding","severity":"error","kind":"gremlin"})",
                          R"({"t":"finding","severity":"fatal","kind":"node"})"}) {
    std::ofstream(journalPath(path), std::ios::app) << bad << "\n";
    try {
      readResults(path);
      FAIL() << bad;
    } catch (const core::UsageError& e) {
      EXPECT_TRUE(std::string(e.what()).find(damagedAt) != std::string::npos ||
                  std::string(e.what()).find("not a fabricmap results journal") != std::string::npos)
          << bad << ": " << e.what();
    }
    // drop the bad line again
    std::ifstream in(journalPath(path));
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    all.resize(all.size() - std::string(bad).size() - 1);
    std::ofstream(journalPath(path)) << all;
  }
}

// Found by fuzzing: a well-formed file whose matrices do not fit its topology (a node matrix
// larger than the node table) made `show` read past its labels. Such a file is damaged.
TEST(ResultsFile, MatricesThatDoNotFitTheTopologyAreDamage) {
  TempDir dir;
  const std::string path = dir.file("misfit.h5");
  fs::copy_file(FABRICMAP_TEST_TEMPLATES "/complete-copies-pairs.h5", path);
  ASSERT_TRUE(readResults(path).hasMatrices);
  {
    h5::Handle f = h5::openFile(path, true);
    H5Ldelete(f.get(), "/matrix/node/bw", H5P_DEFAULT);
    h5::writeArray(f.get(), "/matrix/node/bw", std::vector<float>(9, 1.0f), 3, 3);
  }
  try {
    readResults(path);
    FAIL() << "a misfit matrix was read";
  } catch (const core::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("is damaged: /matrix/node/bw is 3 x 3 for 2 nodes"), std::string::npos)
        << e.what();
  }
}

// The reader validates what the schema promises and names the first violation, with no source
// path in the message: what the file claims is there, attributes of their type and one value each
// (an array was read past its one variable), figures a measurement can give.
TEST(ResultsFile, DamageTheSchemaForbidsIsNamed) {
  TempDir dir;
  const auto damaged = [&](const std::string& name, const std::function<void(hid_t)>& edit) {
    const std::string path = dir.file(name + ".h5");
    fs::copy_file(FABRICMAP_TEST_TEMPLATES "/complete-copies-pairs.h5", path);
    {
      h5::Handle f = h5::openFile(path, true);
      edit(f.get());
    }
    try {
      readResults(path);
    } catch (const core::UsageError& e) {
      return std::string(e.what());
    }
    return std::string("read as valid");
  };
  const auto says = [](const std::string& message, const std::string& words) {
    return message.find("is damaged: " + words) != std::string::npos && message.find(".cpp:") == std::string::npos;
  };
  std::string m = damaged("array", [](hid_t f) {
    H5Adelete(f, "world_size");
    const hsize_t n = 3;
    const std::int64_t values[3] = {1, 2, 3};
    h5::Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
    h5::Handle attr(H5Acreate2(f, "world_size", H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    H5Awrite(attr.get(), H5T_NATIVE_INT64, values);
  });
  EXPECT_TRUE(says(m, "attribute 'world_size' holds 3 values")) << m;
  m = damaged("text", [](hid_t f) {
    H5Adelete(f, "world_size");
    h5::writeAttribute(f, "world_size", std::string("four"));
  });
  EXPECT_TRUE(says(m, "attribute 'world_size' is not an integer")) << m;
  m = damaged("no-pairs", [](hid_t f) { H5Ldelete(f, kPairsTable, H5P_DEFAULT); });
  EXPECT_TRUE(says(m, "/pairs is missing, but /steps lists pairwise steps")) << m;
  m = damaged("no-matrix", [](hid_t f) { H5Ldelete(f, "/matrix/rank/bw_unidir", H5P_DEFAULT); });
  EXPECT_TRUE(says(m, "/matrix/rank/bw_unidir is missing, but the complete run measured pairs")) << m;
  m = damaged("negative", [](hid_t f) {
    int rows = 0;
    int cols = 0;
    std::vector<float> bw = h5::readArray(f, "/matrix/rank/bw_unidir", rows, cols);
    bw[1] = -5.0f;
    h5::writeArray(f, "/matrix/rank/bw_unidir", bw, rows, cols);
  });
  EXPECT_TRUE(says(m, "/matrix/rank/bw_unidir holds a negative or infinite figure")) << m;
}

// Found by fuzzing (a leak inside HDF5 when a row conversion cannot be set up): a table with none
// of a reader's columns reads as rows of defaults without converting anything, and a column of a
// type fabricmap does not write is refused before the read.
TEST(ResultsFile, TablesOfOtherColumnsOrTypes) {
  TempDir dir;
  const std::string path = dir.file("tables.h5");
  const std::vector<h5::ColumnSpec> theirs{{"step", h5::ColumnType::kInt}, {"kind", h5::ColumnType::kText}};
  const std::vector<h5::ColumnSpec> ours{{"node", h5::ColumnType::kInt}, {"kind", h5::ColumnType::kInt},
                                         {"gpudirect", h5::ColumnType::kText}};
  {
    h5::Handle f = h5::createFile(path);
    h5::createTable(f.get(), "/other", theirs);
    h5::appendRows(f.get(), "/other", theirs, {{std::int64_t{3}, std::string("x")}, {std::int64_t{4}, std::string("y")}});
  }
  h5::Handle f = h5::openFile(path, false);
  const std::vector<h5::ColumnSpec> none{ours[0], ours[2]};
  const std::vector<h5::Row> rows = h5::readRows(f.get(), "/other", none);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(std::get<std::int64_t>(rows[1][0]), 0);
  EXPECT_EQ(std::get<std::string>(rows[1][1]), "");
  try {
    h5::readRows(f.get(), "/other", ours);  // `kind` is text in the file
    FAIL() << "a text column was read as a number";
  } catch (const core::Error& e) {
    EXPECT_NE(std::string(e.what()).find("column 'kind' is not of the type fabricmap writes"), std::string::npos)
        << e.what();
  }
}

TEST(ResultsFile, ForeignFilesAreUsageErrors) {
  TempDir dir;
  const std::string text = dir.file("notes.txt");
  std::ofstream(text) << "not hdf5\n";
  EXPECT_THROW(readResults(text), core::UsageError);
  EXPECT_THROW(readResults(dir.file("missing.h5")), core::UsageError);
  // an HDF5 file that fabricmap did not write
  const std::string other = dir.file("other.h5");
  { h5::Handle f = h5::createFile(other); }
  try {
    readResults(other);
    FAIL();
  } catch (const core::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("not a fabricmap results file"), std::string::npos);
  }
}

TEST(ResultsFile, JsonCarriesEveryRecord) {
  TempDir dir;
  const std::string path = dir.file("j.h5");
  {
    H5Sink sink(path);
    sink.begin(sampleProvenance(), sampleTopology(), {{"world", 1, "0-2", "active", ""}});
    sink.step(sampleStep(0, false, "ok"), Rows{sampleRow(0, 0, false)});
    sink.finish(true);
  }
  const auto j = toJson(readResults(path));
  EXPECT_EQ(j["schema_version"], 4);
  EXPECT_EQ(j["inventory"]["nics"][0]["rate"], 400);
  EXPECT_EQ(j["inventory"]["nics"][1]["kind"], "ethernet");
  EXPECT_EQ(j["inventory"]["pcie"][0]["width"], 8);
  EXPECT_EQ(j["inventory"]["node"][0]["gpudirect"], "no");
  EXPECT_EQ(j["inventory"]["gpus"][0]["remapped_rows_uncorrectable"], 2);
  EXPECT_EQ(j["inventory"]["gpus"][0]["remap_pending"], "yes");
  EXPECT_TRUE(j["inventory"]["counters"].empty());
  EXPECT_EQ(j["complete"], true);
  EXPECT_EQ(j["provenance"]["slurm_job_id"], "4242");
  EXPECT_EQ(j["provenance"]["run_config"]["iters"], 20);  // embedded JSON, not a string
  EXPECT_EQ(j["topology"]["ranks"].size(), 3u);
  EXPECT_EQ(j["topology"]["nodes"][1]["class"], "NVLINK_PAIRS");
  EXPECT_EQ(j["topology"]["nodes"][1]["gpu_links"][0][1], "NV4");
  EXPECT_EQ(j["topology"]["nodes"][0]["gpu_links"].size(), 0u);
  EXPECT_EQ(j["scopes"][0]["members"], "0-2");
  EXPECT_EQ(j["steps"][0]["status"], "ok");
  EXPECT_EQ(j["collectives"][0]["busbw"], 9.4466);
  EXPECT_EQ(j["collectives"][0]["time_us_median"], 110.25);
  EXPECT_EQ(j["collectives"][0]["in_place"], false);
}

std::string consoleOf(const std::function<void(ConsoleSink&)>& feed) {
  std::FILE* out = std::tmpfile();
  {
    ConsoleSink sink(out);
    feed(sink);
  }
  std::rewind(out);
  std::string text(1 << 16, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), out));
  std::fclose(out);
  return text;
}

TEST(Console, PairsPlacementsOnOneLineAndSummarizes) {
  const std::string text = consoleOf([](ConsoleSink& s) {
    s.begin(sampleProvenance(), sampleTopology(), {{"intra", 2, "0-1;2-3", "active", ""}});
    s.step(sampleStep(0, false, "ok"), Rows{sampleRow(0, 0, false), sampleRow(0, 1, false)});
    s.step(sampleStep(1, true, "ok"), Rows{sampleRow(1, 0, true), sampleRow(1, 1, true)});
    core::StepRecord waived = sampleStep(2, false, "waived");
    waived.op = "alltoall";
    s.step(waived, {});
    s.finish(true);
  });
  EXPECT_NE(text.find("# all_reduce float sum in scope intra: 2 groups of 2 ranks"), std::string::npos)
      << text;
  EXPECT_NE(text.find("out-of-place"), std::string::npos);
  EXPECT_NE(text.find("(GB/s)"), std::string::npos);
  // group 1's line: both placements, 3 wrong elements each
  EXPECT_NE(text.find("      1      1048576       262144    float    sum    -1      111.00     9.45     "
                      "9.45       3      111.00     9.45     9.45       3"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# waived: alltoall float in scope intra: because"), std::string::npos);
  EXPECT_NE(text.find("intra all_reduce"), std::string::npos);
  EXPECT_NE(text.find("Out of bounds values : 6 FAILED"), std::string::npos);
  EXPECT_NE(text.find("Steps: 2 run, 1 waived"), std::string::npos);
  EXPECT_EQ(text.find("Noisy steps"), std::string::npos) << "no step was noisy";
}

TEST(Console, NoisyStepsAndRunFindingsAreSaid) {
  const std::string text = consoleOf([](ConsoleSink& s) {
    s.begin(sampleProvenance(), sampleTopology(), {});
    core::StepRecord noisy = sampleStep(0, false, "ok");
    noisy.noisy = true;
    s.step(noisy, Rows{sampleRow(0, 0, false)});
    core::Finding f;
    f.kind = core::FindingKind::kDataCorruption;
    f.subject = "rank 3 (gpu02)";
    f.message = "17 wrong elements";
    s.finding(f);
    s.finish(true);
  });
  EXPECT_NE(text.find("Noisy steps (iteration times varied beyond --noise-cv; see time_cv): 1: intra all_reduce "
                      "float 1 MiB out-of-place"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# DATA CORRUPTION (rank 3 (gpu02)): 17 wrong elements"), std::string::npos) << text;
}

TEST(Console, UncheckedResultsAreNotReportedAsCorrect) {
  const std::string text = consoleOf([](ConsoleSink& s) {
    s.begin(sampleProvenance(), sampleTopology(), {});
    core::CollectiveRecord row = sampleRow(0, 0, false);
    row.checked = false;
    row.wrong = 0;
    s.step(sampleStep(0, false, "unchecked"), Rows{row});
    s.finish(true);
  });
  EXPECT_NE(text.find("9.45     N/A"), std::string::npos) << text;
  EXPECT_NE(text.find("Out of bounds values : N/A"), std::string::npos) << text;
  EXPECT_EQ(text.find("OK"), std::string::npos) << text;
}

// The storage feed's rows (a real run of 4 ranks on 2 emulated nodes, --storage-write 8M): read
// back whole, in show --json, and from the journal of a run stopped after them.
TEST(ResultsFile, StorageRowsReadBack) {
  const ResultsFile file = readResults(FABRICMAP_TEST_TEMPLATES "/storage.h5");
  ASSERT_EQ(file.storage.size(), 3u * (4 + 2 + 1));  // write, read, randread: 4 ranks, 2 nodes, the job
  for (const core::StorageRecord& r : file.storage) {
    EXPECT_GT(r.gbps, 0) << r.test << " " << r.level;
    EXPECT_FALSE(r.cache.empty());
  }
  const core::StorageRecord& all = file.storage[6];
  EXPECT_EQ(all.test, "write");
  EXPECT_EQ(all.level, "all");
  EXPECT_EQ(all.ranks, 4);
  EXPECT_EQ(all.bytes, 4u * (8u << 20));
  const auto json = toJson(file);
  EXPECT_EQ(json["storage"].size(), 21u);
  EXPECT_EQ(json["storage"][0]["test"], "write");
  const auto journal = readJournal(FABRICMAP_TEST_DATA "/../fuzz/corpus/journal/stopped-after-storage.journal", "x.h5");
  ASSERT_TRUE(journal.has_value());
  EXPECT_EQ(journal->storage.size(), 21u);
}

}  // namespace
}  // namespace fabricmap::results

namespace fabricmap::results {
namespace {

// Schema v3 named the training and scaling tables' time columns as /collectives names them
// (time_us_*): files and journals of schema v2 (time_min ...) still read whole.
TEST(ResultsFile, SchemaV2TimeColumnsReadUnderTheirFormerNames) {
  const ResultsFile file = readResults(FABRICMAP_TEST_TEMPLATES "/training-scaling.h5");
  EXPECT_LT(file.provenance.schemaVersion, 3);
  ASSERT_FALSE(file.training.empty());
  ASSERT_FALSE(file.scaling.empty());
  for (const auto& t : file.training) EXPECT_GT(t.timeUs.median, 0) << t.traffic;
  for (const auto& s : file.scaling) EXPECT_GT(s.timeUs.min, 0) << s.level;
  const auto json = toJson(file);
  EXPECT_TRUE(json["patterns"]["scaling"][0].contains("time_us_median")) << json["patterns"]["scaling"][0].dump();
  EXPECT_FALSE(json["patterns"]["scaling"][0].contains("time_median"));

  const auto journal = readJournal(FABRICMAP_TEST_DATA "/../fuzz/corpus/journal/stopped-in-training.journal", "x.h5");
  ASSERT_TRUE(journal.has_value());
  ASSERT_FALSE(journal->scaling.empty());
  EXPECT_DOUBLE_EQ(journal->scaling[0].timeUs.median, 1194.249);
  EXPECT_DOUBLE_EQ(journal->scaling[0].timeUs.min, 388.80700000000013);
}

}  // namespace
}  // namespace fabricmap::results
