// Turns pairwise samples into the rank and node matrices of a run.
#pragma once

#include <cstdint>

#include "core/records.h"

namespace fabricmap::orchestrator {

// How the pairs were measured, as the matrices record it (the run's --pairwise options).
struct MatrixShape {
  bool sparse = false;  // quick mode: a few peers per rank, only those cells kept
  std::uint64_t bytes = 0;
  int window = 0;
  int iters = 0;
  int latencyIters = 0;
};

// Keeps, per cell, the best sample (the highest bandwidth, the lowest latency) and, once retests
// arrive (sample > 0, after every first measurement), the worst. On a shared fabric interference
// only ever slows a transfer down, so a link is as good as its best measurement, and a link that
// is really slow never measures fast; the worst sample shows how much the measurements of that
// pair disagreed. Every sample stays in /pairs.
class MatrixBuilder {
 public:
  MatrixBuilder(const core::Topology& topology, const MatrixShape& shape);

  void add(const core::PairRecord& sample);
  // A GPU-pair copy row: into its node's copy matrices and the rank-level fold.
  void add(const core::CopyRecord& copy);
  // Fixes the baselines the final analysis judges against (see analysis.h), from the figures so far.
  void fixExpected(const core::Matrices& withBaselines);
  // The matrices so far: link classes, per-rank peer medians, and the node matrix (measured, or
  // derived from the rank matrix when nodes were not measured as a whole).
  core::Matrices build() const;
  // The same with each re-measured pair's typical bandwidth in place of its best: the median of
  // its samples (of two, the better; exact up to three, beyond that each new sample clamped
  // between the best and worst before it). What the baselines are fixed from after the retests.
  core::Matrices buildTypical() const;
  bool retested() const { return typicalRank_.n > 0 || typicalNode_.n > 0; }
  // The fixed baselines alone (no matrix in it).
  core::Matrices baselines() const;

 private:
  void keepTypical(core::Matrix& typical, const core::Matrix& best, const core::Matrix& worst, int sample,
                   int row, int col, double value);

  const core::Topology& topology_;
  core::Matrices m_;
  core::Matrix typicalRank_;  // copies of the bandwidth matrices made at the first retest
  core::Matrix typicalNode_;
};

// Fills what follows from the rank matrices: link classes, per-rank peer medians, and, unless the
// node matrix was measured, the node matrices (each node pair's figure is the median of its rank
// pairs; of an even count the better middle value). Worst-sample matrices may be empty.
void completeMatrices(core::Matrices& m, const core::Topology& topology);

}  // namespace fabricmap::orchestrator
