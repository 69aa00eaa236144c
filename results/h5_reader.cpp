// HDF5 results reader (see h5_reader.h).
#include "results/h5_reader.h"

#include <pthread.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "core/error.h"
#include "core/files.h"
#include "results/h5.h"
#include "results/journal.h"
#include "results/schema.h"

namespace fabricmap::results {
namespace {

template <class R>
std::vector<R> readTable(hid_t file, const char* path, const std::vector<Column<R>>& columns) {
  std::vector<R> records;
  for (const auto& row : h5::readRows(file, path, specsOf(columns))) {
    records.push_back(fromRow(columns, row));
  }
  return records;
}

template <class T>
T attributeOr(hid_t f, const std::string& path, const char* name, T fallback) {
  const auto v = h5::readAttributeAt(f, path, name);
  if (!v) return fallback;
  return std::visit(
      [&](const auto& x) -> T {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, std::string> || std::is_same_v<T, std::string>) {
          if constexpr (std::is_same_v<X, std::string> && std::is_same_v<T, std::string>) return x;
          return fallback;
        } else {
          return h5::numberAs<T>(x, fallback);
        }
      },
      *v);
}

const std::vector<h5::ColumnSpec>& sparseColumns() {
  static const std::vector<h5::ColumnSpec> kColumns{
      {"row", h5::ColumnType::kInt}, {"col", h5::ColumnType::kInt}, {"value", h5::ColumnType::kFloat}};
  return kColumns;
}

// The cells of a sparse matrix table (row, col, value) of dimension attribute `n`, checked.
template <class Put>
int readCells(hid_t f, const std::string& path, Put put) {
  const auto n = attributeOr<std::int64_t>(f, path, "n", -1);
  if (n < 0 || n > (1 << 24)) throw core::UsageError("'" + path + "' has no valid dimension (attribute n)");
  for (const h5::Row& row : h5::readRows(f, path, sparseColumns())) {
    const auto r = std::get<std::int64_t>(row[0]);
    const auto c = std::get<std::int64_t>(row[1]);
    if (r < 0 || c < 0 || r >= n || c >= n) throw core::UsageError("'" + path + "' has a cell outside its dimension");
    put(static_cast<int>(r), static_cast<int>(c), std::get<double>(row[2]));
  }
  return static_cast<int>(n);
}

// A matrix: dense (an n x n dataset) or sparse (a table of its cells, quick pairwise mode).
core::Matrix matrixAt(hid_t f, const std::string& path) {
  core::Matrix m;
  if (h5::isTable(f, path)) {
    m.sparse = true;
    m.n = static_cast<int>(attributeOr<std::int64_t>(f, path, "n", -1));
    readCells(f, path, [&](int r, int c, double v) { m.cells[m.index(r, c)] = static_cast<float>(v); });
    return m;
  }
  int rows = 0;
  int cols = 0;
  m.values = h5::readArray(f, path, rows, cols);
  if (rows != cols) throw core::UsageError("'" + path + "' is not a square matrix");
  m.n = rows;
  return m;
}

std::vector<int> asInts(const std::vector<float>& values) {
  std::vector<int> out;
  out.reserve(values.size());
  for (float v : values) out.push_back(std::isfinite(v) ? static_cast<int>(v) : -1);
  return out;
}

// /matrix/gpu/<node> of every node, and the rank-level fold. False when no copies were written.
bool readCopyMatrices(hid_t f, const std::vector<core::NodeRecord>& nodes, core::Matrices& m) {
  for (const auto& node : nodes) {
    const std::string group = std::string(kGpuMatrixGroup) + "/" + std::to_string(node.node);
    if (!h5::exists(f, group + "/path")) continue;
    core::CopyMatrices c;
    c.node = node.node;
    int rows = 0;
    int cols = 0;
    c.ranks = asInts(h5::readArray(f, group + "/ranks", rows, cols));
    c.gpus = asInts(h5::readArray(f, group + "/gpus", rows, cols));
    c.path = h5::readTextArray(f, group + "/path", rows, cols);
    if (rows != c.n() || cols != c.n()) throw core::UsageError("'" + group + "/path' does not match its ranks");
    const std::string methods = attributeOr<std::string>(f, group, "methods", "");
    std::size_t from = 0;
    while (from < methods.size()) {
      const std::size_t comma = std::min(methods.find(',', from), methods.size());
      const std::string name = methods.substr(from, comma - from);
      from = comma + 1;
      c.methods.push_back({name, matrixAt(f, group + "/" + name + "_write_unidir"),
                           matrixAt(f, group + "/" + name + "_write_bidir"),
                           matrixAt(f, group + "/" + name + "_read_unidir"),
                           matrixAt(f, group + "/" + name + "_read_bidir")});
    }
    m.copyBytes = attributeOr<std::uint64_t>(f, group, "message_bytes", 0);
    m.copyIters = attributeOr<int>(f, group, "iterations", 0);
    m.copies.push_back(std::move(c));
  }
  const std::string rank = kRankMatrixGroup;
  if (h5::exists(f, rank + "/copy_unidir")) {
    m.rankCopyUnidir = matrixAt(f, rank + "/copy_unidir");
    m.rankCopyBidir = matrixAt(f, rank + "/copy_bidir");
  }
  return !m.copies.empty();
}

bool readMatrices(hid_t f, core::Matrices& m) {
  const std::string rank = kRankMatrixGroup;
  const std::string node = kNodeMatrixGroup;
  if (!h5::exists(f, rank + "/bw_unidir")) return false;
  m.pairsMeasured = true;
  m.rankUnidir = matrixAt(f, rank + "/bw_unidir");
  m.rankBidir = matrixAt(f, rank + "/bw_bidir");
  m.rankLatency = matrixAt(f, rank + "/latency");
  m.rankUnidirWorst = matrixAt(f, rank + "/bw_unidir_worst");
  m.rankLatencyWorst = matrixAt(f, rank + "/latency_worst");
  int rows = 0;
  int cols = 0;
  m.rankPeerMedian = h5::readArray(f, rank + "/peer_median", rows, cols);
  // dense files store every pair's class; sparse ones only the measured cells' (the reader derives
  // the rest from the topology, see readResults)
  if (!h5::isTable(f, rank + "/link_class")) {
    int n = 0;
    for (std::uint8_t c : h5::readEnumArray(f, rank + "/link_class", n)) {
      m.rankLinkClass.table.push_back(static_cast<core::LinkClass>(c));
    }
    m.rankLinkClass.n = n;
  }
  m.nodeBw = matrixAt(f, node + "/bw");
  m.nodeLatency = matrixAt(f, node + "/latency");
  m.nodeBwWorst = matrixAt(f, node + "/bw_worst");
  m.nodeLatencyWorst = matrixAt(f, node + "/latency_worst");
  m.mode = attributeOr<std::string>(f, rank, "mode", "");
  m.bytes = attributeOr<std::uint64_t>(f, rank, "message_bytes", 0);
  m.window = attributeOr<int>(f, rank, "window", 0);
  m.iters = attributeOr<int>(f, rank, "iterations", 0);
  m.latencyIters = attributeOr<int>(f, rank, "latency_iterations", 0);
  m.latencyBytes = attributeOr<std::uint64_t>(f, rank, "latency_bytes", 0);
  m.nodeMeasured = attributeOr<bool>(f, node, "measured", false);
  const auto expected = [&](const std::string& path, const std::string& prefix) {
    const double nan = std::nan("");
    return core::Expected{attributeOr<double>(f, path, (prefix + "_bw").c_str(), nan),
                          attributeOr<double>(f, path, (prefix + "_latency").c_str(), nan),
                          attributeOr<double>(f, path, (prefix + "_bw_spread").c_str(), 0.0),
                          attributeOr<double>(f, path, (prefix + "_latency_spread").c_str(), 0.0),
                          attributeOr<double>(f, path, (prefix + "_bw_gap_bar").c_str(), 0.0)};
  };
  for (std::size_t c = 1; c < core::kLinkClasses; ++c) {
    const std::string cls(core::name(static_cast<core::LinkClass>(c)));
    m.classExpected[c] = expected(rank, "expected_" + cls);
    m.classExpectedFrom[c] = attributeOr<std::string>(f, rank, ("expected_" + cls + "_from").c_str(), "");
  }
  m.nodeExpected = expected(node, "expected");
  m.expectedFixed = h5::readAttributeAt(f, node, "expected_bw").has_value();
  return true;
}

// The matrices must fit the topology they describe (readers index them by rank and node).
void checkShapes(const ResultsFile& f) {
  const int ranks = static_cast<int>(f.topology.ranks.size());
  const int nodes = static_cast<int>(f.topology.nodes.size());
  const auto fits = [](const core::Matrix& m, int n, const char* what, bool optional) {
    if ((optional && m.n == 0) || m.n == n) return;
    throw core::UsageError(fmt::format("{} is {} x {} for {} {}", what, m.n, m.n, n,
                                       std::string_view(what).find("/node") != std::string_view::npos ? "nodes" : "ranks"));
  };
  const core::Matrices& m = f.matrices;
  if (m.pairsMeasured) {
    fits(m.rankUnidir, ranks, "/matrix/rank/bw_unidir", false);
    fits(m.rankBidir, ranks, "/matrix/rank/bw_bidir", false);
    fits(m.rankLatency, ranks, "/matrix/rank/latency", false);
    fits(m.rankUnidirWorst, ranks, "/matrix/rank/bw_unidir_worst", true);
    fits(m.rankLatencyWorst, ranks, "/matrix/rank/latency_worst", true);
    fits(m.nodeBw, nodes, "/matrix/node/bw", false);
    fits(m.nodeLatency, nodes, "/matrix/node/latency", false);
    fits(m.nodeBwWorst, nodes, "/matrix/node/bw_worst", true);
    fits(m.nodeLatencyWorst, nodes, "/matrix/node/latency_worst", true);
    const std::size_t cells = static_cast<std::size_t>(ranks) * static_cast<std::size_t>(ranks);
    if (m.rankLinkClass.n != ranks || (!m.rankLinkClass.table.empty() && m.rankLinkClass.table.size() != cells) ||
        m.rankPeerMedian.size() != static_cast<std::size_t>(ranks)) {
      throw core::UsageError("/matrix/rank/link_class or peer_median does not match the ranks");
    }
    for (core::LinkClass c : m.rankLinkClass.table) {
      if (static_cast<std::size_t>(c) >= core::kLinkClasses) throw core::UsageError("/matrix/rank/link_class holds an unknown class");
    }
  }
  fits(m.rankCopyUnidir, ranks, "/matrix/rank/copy_unidir", true);
  fits(m.rankCopyBidir, ranks, "/matrix/rank/copy_bidir", true);
  for (const auto& c : m.copies) {
    if (c.gpus.size() != c.ranks.size()) throw core::UsageError("/matrix/gpu: gpus do not match ranks");
    for (const auto& method : c.methods) {
      for (const core::Matrix* x : {&method.writeUnidir, &method.writeBidir, &method.readUnidir, &method.readBidir}) {
        fits(*x, c.n(), "a /matrix/gpu matrix", false);
      }
    }
  }
}

// Ends the process (exit 2, one message) when the thread that made it spends more than `limit`
// seconds of CPU time before the guard goes: libhdf5 1.10 loops forever on some damaged files
// (tests/fuzz/README.md), and a reader must not hang. CPU time, not wall time: a large file on a
// slow file system may take long to read but not to compute. The limit can be lowered with
// FABRICMAP_READ_CPU_LIMIT (seconds; tests use it).
class CpuTimeGuard {
 public:
  CpuTimeGuard(const std::string& path, double limit) {
    clockid_t clock{};
    if (pthread_getcpuclockid(pthread_self(), &clock) != 0) return;
    watcher_ = std::thread([this, clock, limit, message = fmt::format(
        "fabricmap: error: reading '{}' did not finish after {:g} s of CPU time: the file is damaged "
        "(the HDF5 library loops on it)\n", path, limit)] {
      std::unique_lock lock(mutex_);
      while (!done_) {
        wake_.wait_for(lock, std::chrono::milliseconds(500));
        timespec used{};
        if (!done_ && clock_gettime(clock, &used) == 0 && static_cast<double>(used.tv_sec) + static_cast<double>(used.tv_nsec) * 1e-9 > limit) {
          // the reader may hold any lock: write the message directly and leave
          [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, message.data(), message.size());
          ::_exit(static_cast<int>(core::ExitCode::kUsage));
        }
      }
    });
  }
  CpuTimeGuard(const CpuTimeGuard&) = delete;
  CpuTimeGuard& operator=(const CpuTimeGuard&) = delete;
  ~CpuTimeGuard() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    if (watcher_.joinable()) watcher_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread watcher_;
};

double readCpuLimit() {
  const char* text = std::getenv("FABRICMAP_READ_CPU_LIMIT");
  char* end = nullptr;
  const double v = text != nullptr ? std::strtod(text, &end) : 0.0;
  return text != nullptr && end != text && v > 0 ? v : 120.0;
}

// Whether `path` is a results file that says it is complete: a journal beside it is then stale
// (a run killed between marking the file complete and removing its journal, or another run's).
bool completeOnDisk(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || !h5::isHdf5File(path)) return false;
  try {
    const h5::Handle file = h5::openFile(path, false);
    const auto complete = h5::readAttribute(file.get(), kCompleteAttribute);
    return complete && std::holds_alternative<bool>(*complete) && std::get<bool>(*complete);
  } catch (const core::Error&) {
    return false;  // unreadable: the journal holds the run
  }
}

// A value of the type a column is written with (integers read where a float is written).
bool typeFits(h5::ColumnType type, const h5::Value& v) {
  switch (type) {
    case h5::ColumnType::kInt:
    case h5::ColumnType::kUInt:
      return std::holds_alternative<std::int64_t>(v) || std::holds_alternative<std::uint64_t>(v);
    case h5::ColumnType::kFloat:
      return !std::holds_alternative<bool>(v) && !std::holds_alternative<std::string>(v);
    case h5::ColumnType::kBool:
      return std::holds_alternative<bool>(v);
    case h5::ColumnType::kText:
      return std::holds_alternative<std::string>(v);
  }
  return false;
}

std::string_view typeName(h5::ColumnType type) {
  switch (type) {
    case h5::ColumnType::kInt:
    case h5::ColumnType::kUInt:
      return "an integer";
    case h5::ColumnType::kFloat:
      return "a number";
    case h5::ColumnType::kBool:
      return "a boolean";
    case h5::ColumnType::kText:
      return "text";
  }
  return "a value";
}

// The root attributes, each of the type the schema writes.
void readProvenance(hid_t f, ResultsFile& out) {
  for (const auto& c : provenanceColumns()) {
    const auto v = h5::readAttribute(f, c.name);
    if (!v) continue;
    if (!typeFits(c.type, *v)) throw core::UsageError(fmt::format("attribute '{}' is not {}", c.name, typeName(c.type)));
    c.set(out.provenance, *v);
  }
  if (const auto v = h5::readAttribute(f, kCompleteAttribute)) {
    if (!std::holds_alternative<bool>(*v)) throw core::UsageError(fmt::format("attribute '{}' is not a boolean", kCompleteAttribute));
    out.complete = std::get<bool>(*v);
  }
}

// A rate, a time or a size: what a measurement gives, never negative or infinite (NaN is "not
// measured").
bool isFigure(std::string_view unit) {
  return unit == "GB/s" || unit == "us" || unit == "s" || unit == "B" || unit == "1/s" || unit == "GT/s" ||
         unit == "Gb/s";
}

template <class R>
void checkFigures(std::string_view table, const std::vector<Column<R>>& columns, const std::vector<R>& rows) {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (const auto& c : columns) {
      if (!isFigure(c.unit)) continue;
      const h5::Value v = c.get(rows[i]);
      const double x = std::visit(
          []<class X>(const X& value) -> double {
            if constexpr (std::is_arithmetic_v<X> && !std::is_same_v<X, bool>) return static_cast<double>(value);
            return 0.0;
          },
          v);
      if (!std::isnan(x) && (!std::isfinite(x) || x < 0)) {
        throw core::UsageError(fmt::format("{} row {}: {} is {} {}, which no measurement gives", table, i, c.name, x, c.unit));
      }
    }
  }
}

void checkMatrixFigures(const core::Matrix& m, std::string_view what) {
  const auto bad = [](float v) { return !std::isnan(v) && (!std::isfinite(v) || v < 0); };
  const bool found = m.sparse ? std::any_of(m.cells.begin(), m.cells.end(), [&](const auto& cell) { return bad(cell.second); })
                              : std::any_of(m.values.begin(), m.values.end(), bad);
  if (found) throw core::UsageError(fmt::format("{} holds a negative or infinite figure", what));
}

// Every figure of the run is one a measurement can give: the steps' tables and the matrices.
void checkFigures(const ResultsFile& file) {
  checkFigures(kStepsTable, stepColumns(), file.steps);
  core::forEachRowType([&]<class R>(std::type_identity<R>) {
    const RowTable<R> table = rowTable<R>();
    checkFigures(table.path, table.columns, rowsIn<R>(file));
  });
  const core::Matrices& m = file.matrices;
  for (const auto& [matrix, what] : {std::pair{&m.rankUnidir, "/matrix/rank/bw_unidir"}, {&m.rankBidir, "/matrix/rank/bw_bidir"},
                                     {&m.rankLatency, "/matrix/rank/latency"}, {&m.rankUnidirWorst, "/matrix/rank/bw_unidir_worst"},
                                     {&m.nodeBw, "/matrix/node/bw"}, {&m.nodeLatency, "/matrix/node/latency"},
                                     {&m.rankCopyUnidir, "/matrix/rank/copy_unidir"}, {&m.rankCopyBidir, "/matrix/rank/copy_bidir"}}) {
    checkMatrixFigures(*matrix, what);
  }
}

// What the file claims it holds is there: the tables every results file has, each step kind's
// table for the steps /steps lists, and a complete run's pair matrices when it measured pairs.
void checkClaims(hid_t f, const ResultsFile& file) {
  for (const char* table : {kRanksTable, kNodesTable, kStepsTable, kFindingsTable}) {
    if (!h5::exists(f, table)) throw core::UsageError(fmt::format("{} is missing", table));
  }
  const auto measured = [&](core::StepKind kind) {
    return std::any_of(file.steps.begin(), file.steps.end(), [&](const core::StepRecord& s) { return s.kind == kind; });
  };
  core::forEachRowType([&]<class R>(std::type_identity<R>) {
    const RowTable<R> table = rowTable<R>();
    if (measured(table.stepKind) && !h5::exists(f, table.path)) {
      throw core::UsageError(fmt::format("{} is missing, but /steps lists {} steps", table.path, core::name(table.stepKind)));
    }
  });
  const bool pairsMeasured = std::any_of(file.steps.begin(), file.steps.end(), [](const core::StepRecord& s) {
    return s.kind == core::StepKind::kPairwise && s.status != "waived";
  });
  if (file.complete && pairsMeasured && !file.matrices.pairsMeasured) {
    throw core::UsageError(fmt::format("{}/bw_unidir is missing, but the complete run measured pairs", kRankMatrixGroup));
  }
}

}  // namespace

ResultsFile readResults(const std::string& path) {
  h5::silenceErrorStack();
  const std::string journal = journalPath(path);
  struct stat st {};
  if (::lstat(journal.c_str(), &st) == 0 && !completeOnDisk(path)) {
    core::requireRegularFile(journal, "results journal");
    if (auto journaled = readJournal(journal, path)) {
      try {
        checkFigures(*journaled);
      } catch (const core::UsageError& e) {
        throw core::UsageError("'" + journal + "' is damaged: " + e.what());
      }
      return *journaled;
    }
  }
  core::requireRegularFile(path, "results file");
  if (!h5::isHdf5File(path)) {
    throw core::UsageError("'" + path + "' is not an HDF5 file (expected a fabricmap results .h5)");
  }
  const CpuTimeGuard guard(path, readCpuLimit());
  h5::Handle file;
  try {
    file = h5::openFile(path, false);
  } catch (const core::Error&) {
    throw core::UsageError("cannot open '" + path + "' (unreadable or damaged HDF5 file)");
  }
  const hid_t f = file.get();
  const auto version = h5::readAttribute(f, "schema_version");
  if (!version) {
    throw core::UsageError("'" + path + "' is an HDF5 file but not a fabricmap results file "
                           "(no schema_version attribute)");
  }
  ResultsFile out;
  out.path = path;
  try {
    readProvenance(f, out);
  } catch (const core::Error& e) {
    throw core::UsageError("'" + path + "' is damaged: " + e.reason());
  }
  if (out.provenance.schemaVersion > kSchemaVersion) {
    throw core::UsageError("'" + path + "' uses schema version " +
                           std::to_string(out.provenance.schemaVersion) +
                           ", newer than this fabricmap reads (" +
                           std::to_string(kSchemaVersion) + ")");
  }
  try {
    out.topology.ranks = readTable(f, kRanksTable, rankColumns());
    out.topology.nodes = readTable(f, kNodesTable, nodeColumns());
    for (auto& node : out.topology.nodes) {
      int rows = 0;
      int cols = 0;
      node.gpuLinks = h5::readTextArray(f, std::string(kGpuLinksGroup) + "/" + std::to_string(node.node), rows, cols);
    }
    forEachInventoryTable([&](const char* table, const char*, const auto& columns, auto member) {
      out.topology.inventory.*member = readTable(f, table, columns);
    });
    forEachFabricTable([&](const char* table, const char*, const auto& columns, auto member) {
      out.topology.fabric.*member = readTable(f, table, columns);
    });
    out.topology.emulated = out.provenance.emulated;
    out.topology.ranksPerNode = out.provenance.ranksPerNode;
    out.scopes = readTable(f, kScopesTable, scopeColumns());
    out.steps = readTable(f, kStepsTable, stepColumns());
    core::forEachRowType([&]<class R>(std::type_identity<R>) {
      const RowTable<R> table = rowTable<R>();
      rowsIn<R>(out) = readTable(f, table.path, table.columns);
    });
    out.findings = readTable(f, kFindingsTable, findingColumns());
    out.layoutPlaces = readTable(f, kLayoutTable, layoutColumns());
    if (!out.layoutPlaces.empty()) out.layout = attributeOr<std::string>(f, kLayoutTable, "layout", "");
    out.imported = readTable(f, kImportedTable, importColumns());
    out.acceptance = readVerdict(f);
    const bool pairs = readMatrices(f, out.matrices);
    if (pairs && out.matrices.rankLinkClass.empty() && out.matrices.rankUnidir.sparse) {
      out.matrices.rankLinkClass = core::linkClassesOf(out.topology);
    }
    const bool copies = readCopyMatrices(f, out.topology.nodes, out.matrices);
    out.hasMatrices = pairs || copies;
    checkShapes(out);
    checkClaims(f, out);
    checkFigures(out);
  } catch (const core::Error& e) {
    throw core::UsageError("'" + path + "' is damaged: " + e.reason());
  }
  return out;
}

}  // namespace fabricmap::results
