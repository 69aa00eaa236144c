// Findings and derived figures of the training pattern and the scaling sweep (see analysis.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "core/units.h"
#include "orchestrator/analysis/analysis.h"

namespace fabricmap::orchestrator {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

std::vector<core::LayoutPlace> layoutPlaces(const core::Layout& layout) {
  std::vector<core::LayoutPlace> places;
  for (int r = 0; r < layout.worldSize(); ++r) places.push_back(core::placeOf(layout, r));
  return places;
}

std::vector<core::Finding> layoutFindings(const core::Layout& layout, const core::Topology& topology) {
  const std::vector<int> crossing = core::tpGroupsCrossingNodes(layout, topology);
  if (crossing.empty()) return {};
  const auto groups = core::groupsOf(layout, core::Parallelism::kTensor);
  const std::vector<int>& first = groups.at(static_cast<std::size_t>(crossing.front()));
  std::set<int> nodes;
  for (int r : first) nodes.insert(topology.ranks.at(static_cast<std::size_t>(r)).node);
  std::string names;
  for (int n : nodes) {
    if (!names.empty()) names += ", ";
    names += topology.nodes.at(static_cast<std::size_t>(n)).name;
  }
  int smallest = std::numeric_limits<int>::max();
  for (const auto& n : topology.nodes) smallest = std::min(smallest, n.ranks);
  core::Finding f;
  f.severity = core::Severity::kWarning;
  f.kind = core::FindingKind::kLayout;
  f.subject = fmt::format("tensor-parallel groups of {}", core::formatLayout(layout));
  f.measured = static_cast<double>(crossing.size());
  f.expected = 0;
  f.ratio = static_cast<double>(crossing.size()) / static_cast<double>(groups.size());
  f.unit = "groups";
  f.nodeA = *nodes.begin();
  f.nodeB = *nodes.rbegin();
  f.message = fmt::format(
      "{} of {} tensor-parallel groups span nodes (group {}: ranks {} on {}): their per-layer all_reduces cross the "
      "network instead of NVLink; use a TP size that divides the {} ranks per node",
      crossing.size(), groups.size(), crossing.front(), core::formatRanks(first), names, smallest);
  return {f};
}

void fillInterference(std::vector<core::TrainingRecord>& concurrent, const std::vector<core::TrainingRecord>& isolated) {
  for (auto& row : concurrent) {
    row.interference = kNaN;
    for (const auto& alone : isolated) {
      if (alone.mode == "isolated" && alone.traffic == row.traffic && alone.timeUs.median > 0) {
        row.interference = row.timeUs.median / alone.timeUs.median;
      }
    }
  }
}

const core::ScalingRecord* scalingBase(const core::ScalingRecord& row, const std::vector<core::ScalingRecord>& rows) {
  const core::ScalingRecord* base = nullptr;
  for (const auto& r : rows) {
    if (r.level != row.level || r.bytes != row.bytes || r.n >= row.n || !(r.busbw > 0)) continue;
    if (base == nullptr || r.busbw > base->busbw) base = &r;
  }
  return base;
}

void fillEfficiency(core::ScalingRecord& row, const std::vector<core::ScalingRecord>& earlier) {
  const core::ScalingRecord* base = scalingBase(row, earlier);
  if (base == nullptr) base = &row;
  row.efficiency = base->busbw > 0 ? row.busbw / base->busbw : kNaN;
}

std::vector<core::Finding> scalingFindings(const std::vector<core::ScalingRecord>& rows, const AnalysisConfig& c) {
  const core::ScalingRecord* full = nullptr;
  for (const auto& r : rows) {
    if (r.level == "gpus" && (full == nullptr || r.n > full->n)) full = &r;
  }
  const core::ScalingRecord* base = full == nullptr ? nullptr : scalingBase(*full, rows);
  if (base == nullptr || !(full->efficiency < c.minScalingEfficiency)) return {};
  core::Finding f;
  f.kind = core::FindingKind::kScaling;
  f.subject = fmt::format("all_reduce on {} GPUs per node", full->n);
  f.measured = full->efficiency;
  f.expected = c.minScalingEfficiency;
  f.ratio = full->efficiency / c.minScalingEfficiency;
  f.unit = "efficiency";
  if (full->noisy || base->noisy) {
    f.severity = core::Severity::kInfo;
    f.message = fmt::format(
        "all_reduce busbw on {} GPUs per node is {:.2f} of the {}-GPU figure, but the measurement was noisy "
        "(iteration times varied beyond --noise-cv): not judged; measure again on a quiet machine",
        full->n, full->efficiency, base->n);
    return {f};
  }
  f.severity = core::Severity::kWarning;
  f.message = fmt::format(
      "all_reduce busbw falls from {:.2f} GB/s on {} GPUs to {:.2f} GB/s on {} GPUs per node (efficiency {:.2f}, "
      "below {:.2f}): the node's GPUs do not scale together - on GPU servers the mark of bridged pairs or PCIe "
      "between them - so tensor parallelism across the whole node will be slow",
      base->busbw, base->n, full->busbw, full->n, full->efficiency, c.minScalingEfficiency);
  return {f};
}

}  // namespace fabricmap::orchestrator
