// Findings folded by culprit for the console summary and the HTML report: one line per thing to
// fix, with the findings that point at it as its evidence. Pure formatting of the records; the
// results file keeps one row per finding.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/records.h"

namespace fabricmap::results {

// One culprit: the findings that name the same thing.
struct Culprit {
  core::Severity severity = core::Severity::kInfo;  // the worst of its findings'
  core::FindingKind kind = core::FindingKind::kNode;
  std::string subject;
  std::vector<core::Finding> evidence;  // worst first; never empty
  double confidence = 0;                // the highest of its findings'

  std::size_t count() const { return evidence.size(); }
  const core::Finding& worst() const { return evidence.front(); }
};

// The findings grouped by culprit: by (kind, subject), except data_corruption rows, which are
// charged to a rank where the rows point at one. Wrong data names every rank that received it (a
// collective group's ranks, both ends of a pair), so one rank corrupting its output shows up in
// every group it joins and its partners only in some: repeatedly, of the ranks named by more
// uncharged corruption rows than every rank they share such a row with, the one named most takes
// all its uncharged rows (one culprit, "rank R (node)"). Rows where that decides nothing (a
// single corrupted pair, a group whose ranks all got wrong data every time) keep their subject;
// node pairs and GPU-pair copies name no ranks and keep theirs. Culprits are ordered most severe
// first, then by their worst figure against its baseline (standing()), then as first found.
// `topology` names the rank's node in a charged culprit's subject (it may be empty).
std::vector<Culprit> groupCulprits(const std::vector<core::Finding>& findings, const core::Topology& topology);

// Whether more of `unit` is better (GB/s, MB/s, efficiency) or worse (us, s, elements, counts).
bool higherIsBetter(std::string_view unit);

// How far a finding stands from its baseline, as a share where lower is worse: measured /
// expected where more is better, expected / measured where less is; 0 for a count of something
// that should not happen at all (wrong elements); NaN without a figure.
double standing(const core::Finding& f);

// The figure of a finding for a person: "40 GB/s = 0.11x of 360 GB/s", "12 elements", "" when
// it has none (or no unit).
std::string figureText(const core::Finding& f);

}  // namespace fabricmap::results
