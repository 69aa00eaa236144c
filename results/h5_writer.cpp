// HDF5 results writer (see h5_writer.h).
#include "results/h5_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <span>
#include <type_traits>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "results/schema.h"

namespace fabricmap::results {
namespace {

// A JSON object {column: unit} on each table, so a reader needs no document to know the units.
template <class R>
void writeUnits(hid_t file, const char* path, const std::vector<Column<R>>& columns) {
  std::string units = "{";
  for (const auto& c : columns) {
    if (c.unit[0] == '\0') continue;
    if (units.size() > 1) units += ", ";
    units += std::string("\"") + c.name + "\": \"" + c.unit + "\"";
  }
  units += "}";
  h5::Handle dset(H5Dopen2(file, path, H5P_DEFAULT), H5Dclose);
  h5::writeAttribute(dset.get(), "units", units);
}

// Appends the records to an existing table.
template <class R>
void appendRecords(hid_t file, const char* path, const std::vector<Column<R>>& columns,
                   std::type_identity_t<std::span<const R>> records) {
  std::vector<h5::Row> rows;
  rows.reserve(records.size());
  for (const R& r : records) rows.push_back(toRow(columns, r));
  h5::appendRows(file, path, specsOf(columns), rows);
}

// Creates the table with its units attribute and writes the records.
template <class R>
void writeTable(hid_t file, const char* path, const std::vector<Column<R>>& columns,
                std::type_identity_t<std::span<const R>> records) {
  h5::createTable(file, path, specsOf(columns));
  appendRecords(file, path, columns, records);
  writeUnits(file, path, columns);
}


void writeExpected(hid_t f, const std::string& path, const std::string& prefix, const core::Expected& e) {
  h5::writeAttributeAt(f, path, prefix + "_bw", e.bandwidth);
  h5::writeAttributeAt(f, path, prefix + "_latency", e.latency);
  h5::writeAttributeAt(f, path, prefix + "_bw_spread", e.bandwidthSpread);
  h5::writeAttributeAt(f, path, prefix + "_latency_spread", e.latencySpread);
  h5::writeAttributeAt(f, path, prefix + "_bw_gap_bar", e.bandwidthGapBar);
}

std::vector<float> asFloats(const std::vector<int>& values) {
  return {values.begin(), values.end()};
}

const std::vector<h5::ColumnSpec>& sparseColumns() {
  static const std::vector<h5::ColumnSpec> kColumns{
      {"row", h5::ColumnType::kInt}, {"col", h5::ColumnType::kInt}, {"value", h5::ColumnType::kFloat}};
  return kColumns;
}

// A matrix at `path`: dense, an n x n float64 dataset; sparse (quick pairwise mode), a table of its
// measured cells (row, col, value) with the dimension in attribute `n`.
void writeMatrix(hid_t f, const std::string& path, const core::Matrix& m, const char* units) {
  if (!m.sparse) {
    h5::writeArray(f, path, m.values, m.n, m.n);
  } else {
    std::vector<h5::Row> rows;
    m.forEachCell([&](int r, int c, float v) {
      rows.push_back({std::int64_t{r}, std::int64_t{c}, static_cast<double>(v)});
    });
    h5::createTable(f, path, sparseColumns());
    h5::appendRows(f, path, sparseColumns(), rows);
    h5::writeAttributeAt(f, path, "n", static_cast<std::int64_t>(m.n));
  }
  h5::writeAttributeAt(f, path, "units", units);
}

// The link class of every rank pair: an R x R enum dataset beside dense matrices, a table of the
// measured cells (row, col, class number) beside sparse ones.
void writeLinkClasses(hid_t f, const std::string& path, const core::Matrices& m) {
  std::vector<std::string> names;
  for (int c = 0; c <= static_cast<int>(core::LinkClass::kInterNode); ++c) {
    names.emplace_back(core::name(static_cast<core::LinkClass>(c)));
  }
  const int n = m.rankUnidir.n;
  if (!m.rankUnidir.sparse) {
    std::vector<std::uint8_t> classes(static_cast<std::size_t>(n) * static_cast<std::size_t>(n));
    for (int a = 0; a < n && !m.rankLinkClass.empty(); ++a) {
      for (int b = 0; b < n; ++b) classes[m.rankUnidir.index(a, b)] = static_cast<std::uint8_t>(m.rankLinkClass.at(a, b));
    }
    h5::writeEnumArray(f, path, classes, n, names);
    return;
  }
  std::vector<h5::Row> rows;
  m.rankUnidir.forEachCell([&](int a, int b, float) {
    if (m.rankLinkClass.empty()) return;
    rows.push_back({std::int64_t{a}, std::int64_t{b}, static_cast<double>(m.rankLinkClass.at(a, b))});
  });
  h5::createTable(f, path, sparseColumns());
  h5::appendRows(f, path, sparseColumns(), rows);
  h5::writeAttributeAt(f, path, "n", static_cast<std::int64_t>(n));
  h5::writeAttributeAt(f, path, "classes", fmt::format("{}", fmt::join(names, ",")));
}

// /matrix/gpu/<node>/... per node, and the rank-level fold /matrix/rank/copy_*.
void writeCopyMatrices(hid_t f, const core::Matrices& m, const std::vector<core::NodeRecord>& nodes) {
  for (const core::CopyMatrices& c : m.copies) {
    const std::string group = std::string(kGpuMatrixGroup) + "/" + std::to_string(c.node);
    const int n = c.n();
    std::string methods;
    for (const auto& x : c.methods) {
      methods += (methods.empty() ? "" : ",") + x.method;
      for (const auto& [suffix, matrix] : {std::pair<const char*, const core::Matrix*>{"_write_unidir", &x.writeUnidir},
                                           {"_write_bidir", &x.writeBidir},
                                           {"_read_unidir", &x.readUnidir},
                                           {"_read_bidir", &x.readBidir}}) {
        const std::string path = group + "/" + x.method + suffix;
        h5::writeArray(f, path, matrix->values, n, n);
        h5::writeAttributeAt(f, path, "units", "GB/s");
      }
    }
    h5::writeTextArray(f, group + "/path", c.path, n, n);
    h5::writeArray(f, group + "/ranks", asFloats(c.ranks), n, 0);
    h5::writeArray(f, group + "/gpus", asFloats(c.gpus), n, 0);
    h5::writeAttributeAt(f, group, "methods", methods);
    h5::writeAttributeAt(f, group, "message_bytes", static_cast<std::uint64_t>(m.copyBytes));
    h5::writeAttributeAt(f, group, "iterations", static_cast<std::int64_t>(m.copyIters));
    if (c.node >= 0 && c.node < static_cast<int>(nodes.size())) {
      const core::NodeRecord& node = nodes[static_cast<std::size_t>(c.node)];
      h5::writeAttributeAt(f, group, "name", node.name);
      h5::writeAttributeAt(f, group, "hostname", node.hostname);
    }
  }
  if (m.rankCopyUnidir.n == 0) return;
  const std::string rank = kRankMatrixGroup;
  writeMatrix(f, rank + "/copy_unidir", m.rankCopyUnidir, "GB/s");
  writeMatrix(f, rank + "/copy_bidir", m.rankCopyBidir, "GB/s");
}


// /matrix/rank/... and /matrix/node/...: the pairwise matrices and their baselines.
void writePairMatrices(hid_t f, const core::Matrices& m) {
  const std::string rank = kRankMatrixGroup;
  const std::string node = kNodeMatrixGroup;
  const int n = m.rankUnidir.n;
  // an empty worst matrix means every pair has one sample: its worst is its best
  const auto orBest = [](const core::Matrix& worst, const core::Matrix& best) -> const core::Matrix& {
    return worst.n > 0 ? worst : best;
  };
  writeMatrix(f, rank + "/bw_unidir", m.rankUnidir, "GB/s");
  writeMatrix(f, rank + "/bw_bidir", m.rankBidir, "GB/s");
  writeMatrix(f, rank + "/latency", m.rankLatency, "us");
  writeMatrix(f, rank + "/bw_unidir_worst", orBest(m.rankUnidirWorst, m.rankUnidir), "GB/s");
  writeMatrix(f, rank + "/latency_worst", orBest(m.rankLatencyWorst, m.rankLatency), "us");
  h5::writeArray(f, rank + "/peer_median", m.rankPeerMedian, n, 0);
  h5::writeAttributeAt(f, rank + "/peer_median", "units", "GB/s");
  writeLinkClasses(f, rank + "/link_class", m);
  h5::writeAttributeAt(f, rank, "mode", m.mode);
  h5::writeAttributeAt(f, rank, "message_bytes", static_cast<std::uint64_t>(m.bytes));
  h5::writeAttributeAt(f, rank, "window", static_cast<std::int64_t>(m.window));
  h5::writeAttributeAt(f, rank, "iterations", static_cast<std::int64_t>(m.iters));
  h5::writeAttributeAt(f, rank, "latency_iterations", static_cast<std::int64_t>(m.latencyIters));
  h5::writeAttributeAt(f, rank, "latency_bytes", static_cast<std::uint64_t>(m.latencyBytes));
  writeMatrix(f, node + "/bw", m.nodeBw, "GB/s");
  writeMatrix(f, node + "/latency", m.nodeLatency, "us");
  writeMatrix(f, node + "/bw_worst", orBest(m.nodeBwWorst, m.nodeBw), "GB/s");
  writeMatrix(f, node + "/latency_worst", orBest(m.nodeLatencyWorst, m.nodeLatency), "us");
  h5::writeAttributeAt(f, node, "measured", m.nodeMeasured);
  // the baselines the findings were judged against
  for (std::size_t c = 1; c < core::kLinkClasses; ++c) {
    const std::string cls(core::name(static_cast<core::LinkClass>(c)));
    writeExpected(f, rank, "expected_" + cls, m.classExpected[c]);
    h5::writeAttributeAt(f, rank, "expected_" + cls + "_from", m.classExpectedFrom[c]);
  }
  writeExpected(f, node, "expected", m.nodeExpected);
}

}  // namespace

std::string unpublishedPath(const std::string& path) { return path + ".new"; }

H5Sink::H5Sink(const std::string& path, Publish when) : path_(path), when_(when) {
  h5::silenceErrorStack();
  // the partial file is ours whatever stands at its name: a FIFO planted there would take the
  // writes until its buffer fills, then hold the run forever
  ::unlink(unpublishedPath(path).c_str());
  try {
    file_ = h5::createFile(unpublishedPath(path));
  } catch (const core::Error&) {
    throw core::UsageError("cannot create HDF5 results file '" + path + "'");
  }
}

void H5Sink::begin(const core::Provenance& provenance, const core::Topology& topology,
                   const std::vector<core::ScopeRecord>& scopes) {
  const hid_t f = file_.get();
  core::Provenance stamped = provenance;  // a new file (a resumed run's too) has this schema
  stamped.schemaVersion = kSchemaVersion;
  for (const auto& c : provenanceColumns()) h5::writeAttribute(f, c.name, c.get(stamped));
  h5::writeAttribute(f, kCompleteAttribute, false);
  nodes_ = topology.nodes;
  writeTable(f, kRanksTable, rankColumns(), topology.ranks);
  writeTable(f, kNodesTable, nodeColumns(), topology.nodes);
  for (const auto& node : topology.nodes) {
    const int g = node.gpuLinkCount();
    if (g == 0) continue;
    const std::string path = std::string(kGpuLinksGroup) + "/" + std::to_string(node.node);
    h5::writeTextArray(f, path, node.gpuLinks, g, g);
    h5::writeAttributeAt(f, path, "hostname", node.hostname);
  }
  forEachInventoryTable([&](const char* path, const char*, const auto& columns, auto member) {
    writeTable(f, path, columns, topology.inventory.*member);
  });
  if (!topology.fabric.devices.empty()) {
    forEachFabricTable([&](const char* path, const char*, const auto& columns, auto member) {
      writeTable(f, path, columns, topology.fabric.*member);
    });
  }
  writeTable(f, kScopesTable, scopeColumns(), scopes);
  writeTable(f, kStepsTable, stepColumns(), {});
  core::forEachRowType([&]<class R>(std::type_identity<R>) {
    const RowTable<R> table = rowTable<R>();
    writeTable(f, table.path, table.columns, {});
  });
  writeTable(f, kFindingsTable, findingColumns(), {});
  h5::flush(f);
  // the file takes its name once it is a results file: a run killed before never leaves one
  // that cannot be read
  if (when_ == Publish::kAtBegin) publish();
}

void H5Sink::publish() {
  if (published_) return;
  h5::flush(file_.get());
  std::error_code ec;
  std::filesystem::rename(unpublishedPath(path_), path_, ec);
  if (ec) throw FM_FAULT("cannot rename the results file to '" + path_ + "': " + ec.message());
  published_ = true;
}

// A finished step: its rows, then its /steps row (a step listed there always has its
// measurements), flushed so a run that dies keeps it.
void H5Sink::step(const core::StepRecord& step, const core::StepRows& rows) {
  const hid_t f = file_.get();
  std::visit(
      [&]<class R>(std::span<const R> records) {
        const RowTable<R> table = rowTable<R>();
        appendRecords(f, table.path, table.columns, records);
      },
      rows);
  appendRecords(f, kStepsTable, stepColumns(), {&step, 1});
  h5::flush(f);
}

void H5Sink::layout(const std::string& layout, const std::vector<core::LayoutPlace>& places) {
  const hid_t f = file_.get();
  writeTable(f, kLayoutTable, layoutColumns(), places);
  h5::writeAttributeAt(f, kLayoutTable, "layout", layout);
  h5::flush(f);
}

void H5Sink::planExtended(int plannedSteps) {
  h5::writeAttribute(file_.get(), "planned_steps", static_cast<std::int64_t>(plannedSteps));
  h5::flush(file_.get());
}

void H5Sink::analysis(const core::Matrices& m, const std::vector<core::Finding>& findings) {
  const hid_t f = file_.get();
  writeCopyMatrices(f, m, nodes_);
  if (m.pairsMeasured) writePairMatrices(f, m);
  // after the findings recorded during the run (data corruption)
  appendRecords(f, kFindingsTable, findingColumns(), findings);
  h5::flush(f);
}


void H5Sink::finding(const core::Finding& finding) {
  const hid_t f = file_.get();
  appendRecords(f, kFindingsTable, findingColumns(), {&finding, 1});
  h5::flush(f);
}

void H5Sink::inventoryEnd(const core::InventoryRows& end) {
  const hid_t f = file_.get();
  forEachInventoryTable([&](const char* path, const char*, const auto& columns, auto member) {
    if (!(end.*member).empty()) appendRecords(f, path, columns, end.*member);
  });
  h5::flush(f);
}

void H5Sink::imported(const std::vector<core::ImportRecord>& records) {
  writeTable(file_.get(), kImportedTable, importColumns(), records);
  h5::flush(file_.get());
}

void H5Sink::costs(const core::RankZeroCosts& costs) {
  h5::writeAttribute(file_.get(), "rank0_plan_seconds", costs.planSeconds);
  h5::writeAttribute(file_.get(), "rank0_analysis_seconds", costs.analysisSeconds);
  h5::writeAttribute(file_.get(), "rank0_write_seconds", costs.writeSeconds);
  h5::writeAttribute(file_.get(), "rank0_peak_rss_bytes", costs.peakRssBytes);
}

void H5Sink::finish(bool complete) {
  publish();
  h5::writeAttribute(file_.get(), kCompleteAttribute, complete);
  h5::flush(file_.get());
  file_.reset();
}

}  // namespace fabricmap::results
