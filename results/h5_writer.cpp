// HDF5 results writer (see h5_writer.h).
#include "results/h5_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

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

// Creates the table with its units attribute and writes the records.
template <class R>
void writeTable(hid_t file, const char* path, const std::vector<Column<R>>& columns,
                const std::vector<R>& records) {
  const auto specs = specsOf(columns);
  h5::createTable(file, path, specs);
  std::vector<h5::Row> rows;
  rows.reserve(records.size());
  for (const R& r : records) rows.push_back(toRow(columns, r));
  h5::appendRows(file, path, specs, rows);
  writeUnits(file, path, columns);
}

}  // namespace

void checkWritable(const std::string& path, bool createParents) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  if (p.filename().empty()) throw core::UsageError("output path '" + path + "' names a directory");
  const fs::path parent = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  std::error_code ec;
  if (!fs::exists(parent, ec)) {
    if (!createParents) {
      throw core::UsageError("cannot write results file '" + path + "': directory '" +
                             parent.string() + "' does not exist");
    }
    fs::create_directories(parent, ec);
    if (ec) {
      throw core::UsageError("cannot create directory '" + parent.string() +
                             "' for the results file: " + ec.message());
    }
  }
  if (fs::is_directory(p, ec)) {
    throw core::UsageError("output path '" + path + "' is a directory");
  }
  const bool existed = fs::exists(p, ec);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT, 0644);
  if (fd < 0) {
    throw core::UsageError("cannot write results file '" + path + "': " + std::strerror(errno));
  }
  ::close(fd);
  if (!existed) fs::remove(p, ec);
}

H5Sink::H5Sink(const std::string& path) : path_(path) {
  h5::silenceErrorStack();
  try {
    file_ = h5::createFile(path);
  } catch (const core::Error&) {
    throw core::UsageError("cannot create HDF5 results file '" + path + "'");
  }
}

void H5Sink::begin(const core::Provenance& provenance, const core::Topology& topology,
                   const std::vector<core::ScopeRecord>& scopes) {
  const hid_t f = file_.get();
  for (const auto& c : provenanceColumns()) h5::writeAttribute(f, c.name, c.get(provenance));
  h5::writeAttribute(f, kCompleteAttribute, false);
  writeTable(f, kRanksTable, rankColumns(), topology.ranks);
  writeTable(f, kNodesTable, nodeColumns(), topology.nodes);
  writeTable(f, kScopesTable, scopeColumns(), scopes);
  writeTable(f, kStepsTable, stepColumns(), std::vector<core::StepRecord>{});
  writeTable(f, kCollectivesTable, collectiveColumns(), std::vector<core::CollectiveRecord>{});
  h5::flush(f);
}

void H5Sink::step(const core::StepRecord& step, const std::vector<core::CollectiveRecord>& rows) {
  const hid_t f = file_.get();
  std::vector<h5::Row> collectiveRows;
  collectiveRows.reserve(rows.size());
  for (const auto& r : rows) collectiveRows.push_back(toRow(collectiveColumns(), r));
  // Rows before the step row: a step listed in /steps always has its measurements.
  h5::appendRows(f, kCollectivesTable, specsOf(collectiveColumns()), collectiveRows);
  h5::appendRows(f, kStepsTable, specsOf(stepColumns()), {toRow(stepColumns(), step)});
  h5::flush(f);
}

void H5Sink::finish(bool complete) {
  h5::writeAttribute(file_.get(), kCompleteAttribute, complete);
  h5::flush(file_.get());
  file_.reset();
}

}  // namespace fabricmap::results
