// The light reader of `fabricmap history` (see history_reader.h): root attributes, node names, the
// node matrix and the class baselines' attributes, the findings and, when asked, a few columns of
// /collectives.
#include "results/history_reader.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "core/error.h"
#include "core/files.h"
#include "results/h5.h"
#include "results/journal.h"
#include "results/schema.h"

namespace fabricmap::results {
namespace {

// The columns of `all` named in `names`, in `all`'s order: HDF5 converts only those.
template <class R>
std::vector<Column<R>> only(const std::vector<Column<R>>& all, std::initializer_list<std::string_view> names) {
  std::vector<Column<R>> out;
  std::copy_if(all.begin(), all.end(), std::back_inserter(out),
               [&](const Column<R>& c) { return std::find(names.begin(), names.end(), c.name) != names.end(); });
  return out;
}

template <class R>
std::vector<R> readTable(hid_t f, const char* path, const std::vector<Column<R>>& columns) {
  std::vector<R> out;
  for (const h5::Row& row : h5::readRows(f, path, specsOf(columns))) out.push_back(fromRow(columns, row));
  return out;
}

double numberAt(hid_t f, const std::string& path, const std::string& name) {
  const auto v = h5::readAttributeAt(f, path, name);
  if (!v) return std::nan("");
  return std::visit(
      [](const auto& x) -> double {
        if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::string>) {
          return std::nan("");
        } else {
          return static_cast<double>(x);
        }
      },
      *v);
}

std::string textAt(hid_t f, const std::string& path, const std::string& name) {
  const auto v = h5::readAttributeAt(f, path, name);
  return v && std::holds_alternative<std::string>(*v) ? std::get<std::string>(*v) : std::string();
}

// /matrix/node/bw, dense or (quick mode) a table of its cells.
core::Matrix nodeMatrix(hid_t f, const std::string& path) {
  core::Matrix m;
  if (!h5::isTable(f, path)) {
    int rows = 0;
    int cols = 0;
    m.values = h5::readArray(f, path, rows, cols);
    if (rows != cols) throw core::UsageError("damaged: '" + path + "' is not a square matrix");
    m.n = rows;
    return m;
  }
  const double n = numberAt(f, path, "n");
  if (!(n >= 0 && n <= (1 << 24)))
    throw core::UsageError("damaged: '" + path + "' has no valid dimension (attribute n)");
  m = core::sparseMatrix(static_cast<int>(n));
  static const std::vector<h5::ColumnSpec> kCells{
      {"row", h5::ColumnType::kInt}, {"col", h5::ColumnType::kInt}, {"value", h5::ColumnType::kFloat}};
  for (const h5::Row& row : h5::readRows(f, path, kCells)) {
    const auto r = std::get<std::int64_t>(row[0]);
    const auto c = std::get<std::int64_t>(row[1]);
    if (r < 0 || c < 0 || r >= m.n || c >= m.n)
      throw core::UsageError("damaged: '" + path + "' has a cell outside its dimension");
    m.at(static_cast<int>(r), static_cast<int>(c)) = static_cast<float>(std::get<double>(row[2]));
  }
  return m;
}

// The node matrix and the baselines each link class was judged against.
void readNodeFigures(hid_t f, core::Matrices& m) {
  const std::string rank = kRankMatrixGroup;
  const std::string node = kNodeMatrixGroup;
  m.pairsMeasured = h5::exists(f, node + "/bw");
  if (!m.pairsMeasured) return;
  m.nodeBw = nodeMatrix(f, node + "/bw");
  for (std::size_t c = 1; c < core::kLinkClasses; ++c) {
    const std::string prefix = "expected_" + std::string(core::name(static_cast<core::LinkClass>(c)));
    m.classExpected[c].bandwidth = numberAt(f, rank, prefix + "_bw");
    m.classExpectedFrom[c] = textAt(f, rank, prefix + "_from");
  }
  m.nodeExpected.bandwidth = numberAt(f, node, "expected_bw");
}

std::vector<std::string> namesOf(const std::vector<core::NodeRecord>& nodes) {
  std::vector<std::string> names(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const core::NodeRecord& n = nodes[i];
    const auto at =
        n.node >= 0 && static_cast<std::size_t>(n.node) < names.size() ? static_cast<std::size_t>(n.node) : i;
    names[at] = n.name.empty() ? fmt::format("node{}", n.node) : n.name;
  }
  return names;
}

RunDigest readDigest(hid_t f, const std::string& path, bool withCollectives) {
  RunDigest d;
  d.path = path;
  try {
    if (!h5::readAttribute(f, "schema_version")) {
      throw core::UsageError("an HDF5 file but not a fabricmap results file (no schema_version attribute)");
    }
    for (const auto& c : only(provenanceColumns(), {"schema_version", "created_utc", "hostnames", "backend"})) {
      if (auto v = h5::readAttribute(f, c.name)) c.set(d.provenance, *v);
    }
    if (d.provenance.schemaVersion > kSchemaVersion) {
      throw core::UsageError(fmt::format("uses schema version {}, newer than this fabricmap reads ({})",
                                         d.provenance.schemaVersion, kSchemaVersion));
    }
    d.nodes = namesOf(readTable(f, kNodesTable, only(nodeColumns(), {"node", "name"})));
    readNodeFigures(f, d.matrices);
    if (d.matrices.pairsMeasured && d.matrices.nodeBw.n != static_cast<int>(d.nodes.size())) {
      throw core::UsageError(
          fmt::format("damaged: /matrix/node/bw is {0} x {0} for {1} nodes", d.matrices.nodeBw.n, d.nodes.size()));
    }
    d.findings = readTable(f, kFindingsTable, findingColumns());
    if (withCollectives) {
      d.collectives = readTable(f, kCollectivesTable,
                                only(collectiveColumns(), {"scope", "group", "op", "dtype", "redop", "in_place",
                                                           "bytes", "busbw", "busbw_median", "checked", "wrong"}));
    }
  } catch (const core::UsageError& e) {
    throw core::UsageError("'" + path + "': " + e.what());
  } catch (const core::Error& e) {
    throw core::UsageError("'" + path + "' is damaged: " + e.reason());
  }
  return d;
}

// Every table read converts through a 1 MiB buffer HDF5 callocs from its block free list; with
// the default limit (64 KiB a list) the block goes back to the system after each read and the next
// read faults its pages in again: most of the time of a thousand small files. Kept, it is reused.
void keepConversionBuffers() {
  constexpr int kUnlimited = -1;
  constexpr int kBlocks = 16 << 20;  // bytes of freed blocks kept, per list and in all
  H5set_free_list_limits(kUnlimited, kUnlimited, kUnlimited, kUnlimited, kBlocks, kBlocks);
}

}  // namespace

RunDigest digestOf(const ResultsFile& file) {
  RunDigest d;
  d.path = file.path;
  d.provenance = file.provenance;
  d.nodes = namesOf(file.topology.nodes);
  d.matrices.pairsMeasured = file.matrices.pairsMeasured;
  d.matrices.nodeBw = file.matrices.nodeBw;
  d.matrices.classExpected = file.matrices.classExpected;
  d.matrices.classExpectedFrom = file.matrices.classExpectedFrom;
  d.matrices.nodeExpected = file.matrices.nodeExpected;
  d.findings = file.findings;
  d.collectives = file.collectives;
  return d;
}

RunDigest readRunDigest(const std::string& path, bool withCollectives) {
  std::error_code ec;
  if (std::filesystem::exists(journalPath(path), ec)) return digestOf(readResults(path));
  h5::silenceErrorStack();
  keepConversionBuffers();
  core::requireRegularFile(path, "results file");
  if (!h5::isHdf5File(path)) throw core::UsageError("'" + path + "' is not an HDF5 file");
  h5::Handle file;
  try {
    file = h5::openFile(path, false);
  } catch (const core::Error&) {
    throw core::UsageError("cannot open '" + path + "' (unreadable or damaged HDF5 file)");
  }
  return readDigest(file.get(), path, withCollectives);
}

}  // namespace fabricmap::results
