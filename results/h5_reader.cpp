// HDF5 results reader (see h5_reader.h).
#include "results/h5_reader.h"

#include <filesystem>

#include "core/error.h"
#include "results/h5.h"
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

}  // namespace

ResultsFile readResults(const std::string& path) {
  h5::silenceErrorStack();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw core::UsageError("no such file: '" + path + "'");
  if (std::filesystem::is_directory(path, ec)) {
    throw core::UsageError("'" + path + "' is a directory, not a results file");
  }
  if (!h5::isHdf5File(path)) {
    throw core::UsageError("'" + path + "' is not an HDF5 file (expected a fabricmap results .h5)");
  }
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
  for (const auto& c : provenanceColumns()) {
    if (auto v = h5::readAttribute(f, c.name)) c.set(out.provenance, *v);
  }
  if (out.provenance.schemaVersion > kSchemaVersion) {
    throw core::UsageError("'" + path + "' uses schema version " +
                           std::to_string(out.provenance.schemaVersion) +
                           ", newer than this fabricmap reads (" +
                           std::to_string(kSchemaVersion) + ")");
  }
  if (auto v = h5::readAttribute(f, kCompleteAttribute)) {
    out.complete = std::holds_alternative<bool>(*v) && std::get<bool>(*v);
  }
  try {
    out.topology.ranks = readTable(f, kRanksTable, rankColumns());
    out.topology.nodes = readTable(f, kNodesTable, nodeColumns());
    out.topology.emulated = out.provenance.emulated;
    out.topology.ranksPerNode = out.provenance.ranksPerNode;
    out.scopes = readTable(f, kScopesTable, scopeColumns());
    out.steps = readTable(f, kStepsTable, stepColumns());
    out.collectives = readTable(f, kCollectivesTable, collectiveColumns());
  } catch (const core::Error& e) {
    throw core::UsageError("'" + path + "' is damaged: " + e.what());
  }
  return out;
}

}  // namespace fabricmap::results
