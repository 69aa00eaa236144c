// The results file's schema v2 (results/SCHEMA.md is its description): which record field is which
// column or attribute, under which name and unit. The HDF5 writer and reader and the JSON output
// all iterate these lists, so a field is named once.
#pragma once

#include <string>
#include <vector>

#include "core/layout.h"
#include "core/records.h"
#include "results/h5.h"

namespace fabricmap::results {

inline constexpr int kSchemaVersion = 4;

inline constexpr const char* kRanksTable = "/topology/ranks";
inline constexpr const char* kNodesTable = "/topology/nodes";
inline constexpr const char* kScopesTable = "/scopes";
inline constexpr const char* kStepsTable = "/steps";
inline constexpr const char* kCollectivesTable = "/collectives";
inline constexpr const char* kGpuLinksGroup = "/topology/gpu_links";  // one G x G dataset per node
inline constexpr const char* kPairsTable = "/pairs";
inline constexpr const char* kCopiesTable = "/copies";
inline constexpr const char* kGpuMatrixGroup = "/matrix/gpu";  // one group per node
inline constexpr const char* kFindingsTable = "/findings";
inline constexpr const char* kLayoutTable = "/patterns/layout";      // attribute "layout"
inline constexpr const char* kTrainingTable = "/patterns/training";
inline constexpr const char* kScalingTable = "/patterns/scaling";
inline constexpr const char* kStorageTable = "/storage";
inline constexpr const char* kRankMatrixGroup = "/matrix/rank";
inline constexpr const char* kNodeMatrixGroup = "/matrix/node";
inline constexpr const char* kInventoryNicsTable = "/inventory/nics";
inline constexpr const char* kInventoryPcieTable = "/inventory/pcie";
inline constexpr const char* kInventoryGpusTable = "/inventory/gpus";
inline constexpr const char* kInventoryNodesTable = "/inventory/node";
inline constexpr const char* kInventoryCountersTable = "/inventory/counters";
inline constexpr const char* kInventoryEndpointsTable = "/inventory/endpoints";
inline constexpr const char* kFabricDevicesTable = "/fabric/devices";  // --fabric: switches and host adapters
inline constexpr const char* kFabricLinksTable = "/fabric/links";      // and the cables between their ports
inline constexpr const char* kImportedTable = "/imported";  // `fabricmap import`: one row per log table
inline constexpr const char* kCompleteAttribute = "complete";

template <class R>
struct Column {
  const char* name;
  h5::ColumnType type;
  const char* unit;  // "" when dimensionless
  h5::Value (*get)(const R&);
  void (*set)(R&, const h5::Value&);
  const char* formerName = nullptr;  // its name in older schemas, read when `name` is absent
};

const std::vector<Column<core::Provenance>>& provenanceColumns();  // root attributes
const std::vector<Column<core::RankRecord>>& rankColumns();
const std::vector<Column<core::NodeRecord>>& nodeColumns();
const std::vector<Column<core::ScopeRecord>>& scopeColumns();
const std::vector<Column<core::StepRecord>>& stepColumns();
const std::vector<Column<core::CollectiveRecord>>& collectiveColumns();
const std::vector<Column<core::PairRecord>>& pairColumns();
const std::vector<Column<core::CopyRecord>>& copyColumns();
const std::vector<Column<core::Finding>>& findingColumns();
const std::vector<Column<core::LayoutPlace>>& layoutColumns();
const std::vector<Column<core::TrainingRecord>>& trainingColumns();
const std::vector<Column<core::ScalingRecord>>& scalingColumns();
const std::vector<Column<core::StorageRecord>>& storageColumns();
const std::vector<Column<core::ImportRecord>>& importColumns();
const std::vector<Column<core::NicRecord>>& nicColumns();
const std::vector<Column<core::PcieRecord>>& pcieColumns();
const std::vector<Column<core::GpuInventoryRecord>>& gpuInventoryColumns();
const std::vector<Column<core::NodeInventoryRecord>>& nodeInventoryColumns();
const std::vector<Column<core::CounterRecord>>& counterColumns();
const std::vector<Column<core::EndpointRecord>>& endpointColumns();
const std::vector<Column<core::FabricDevice>>& fabricDeviceColumns();
const std::vector<Column<core::FabricLink>>& fabricLinkColumns();

// The fabric's tables (--fabric), in one list for the writer, the reader and the journal, like
// the inventory's: `visit(path, journal line type, columns, member of core::FabricGraph)`.
template <class Visit>
void forEachFabricTable(Visit&& visit) {
  visit(kFabricDevicesTable, "fabric_device", fabricDeviceColumns(), &core::FabricGraph::devices);
  visit(kFabricLinksTable, "fabric_link", fabricLinkColumns(), &core::FabricGraph::links);
}

// A step kind's table: its kind in /steps, where its rows go in the file, the type of its journal
// lines, its columns.
// One specialization per row type of core::StepRows (results/schema.cpp); the writer, journal and
// reader handle every step kind through it.
// The inventory tables, in one list for the writer, the reader and the journal: `visit(path,
// journal line type, columns, member of core::InventoryRows)`. The counters and endpoints are
// written at the run's end, the others at its start.
template <class Visit>
void forEachInventoryTable(Visit&& visit) {
  visit(kInventoryNicsTable, "nic", nicColumns(), &core::InventoryRows::nics);
  visit(kInventoryPcieTable, "pcie", pcieColumns(), &core::InventoryRows::pcie);
  visit(kInventoryGpusTable, "gpu_inventory", gpuInventoryColumns(), &core::InventoryRows::gpus);
  visit(kInventoryNodesTable, "node_inventory", nodeInventoryColumns(), &core::InventoryRows::nodes);
  visit(kInventoryCountersTable, "counter", counterColumns(), &core::InventoryRows::counters);
  visit(kInventoryEndpointsTable, "endpoint", endpointColumns(), &core::InventoryRows::endpoints);
}

template <class R>
struct RowTable {
  core::StepKind stepKind;  // its steps' kind in /steps
  const char* path;
  const char* journalType;
  const std::vector<Column<R>>& columns;
};
template <class R>
RowTable<R> rowTable();
template <>
RowTable<core::CollectiveRecord> rowTable();
template <>
RowTable<core::CopyRecord> rowTable();
template <>
RowTable<core::PairRecord> rowTable();
template <>
RowTable<core::ScalingRecord> rowTable();
template <>
RowTable<core::TrainingRecord> rowTable();
template <>
RowTable<core::StorageRecord> rowTable();

template <class R>
std::vector<h5::ColumnSpec> specsOf(const std::vector<Column<R>>& columns) {
  std::vector<h5::ColumnSpec> specs;
  specs.reserve(columns.size());
  for (const auto& c : columns) specs.push_back({c.name, c.type, c.formerName != nullptr ? c.formerName : ""});
  return specs;
}

template <class R>
h5::Row toRow(const std::vector<Column<R>>& columns, const R& record) {
  h5::Row row;
  row.reserve(columns.size());
  for (const auto& c : columns) row.push_back(c.get(record));
  return row;
}

template <class R>
R fromRow(const std::vector<Column<R>>& columns, const h5::Row& row) {
  R record{};
  for (std::size_t i = 0; i < columns.size() && i < row.size(); ++i) columns[i].set(record, row[i]);
  return record;
}

}  // namespace fabricmap::results
