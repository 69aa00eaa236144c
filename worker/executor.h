// Runs plan steps on every rank: all groups of a step's scope at once, each timed on its own,
// results gathered to rank 0. The same executor drives every backend.
#pragma once

#include <mpi.h>

#include <array>
#include <memory>
#include <utility>
#include <vector>

#include "core/plan.h"
#include "core/records.h"
#include "worker/backend.h"
#include "worker/comm.h"
#include "worker/pair_timing.h"
#include "worker/typical_windows.h"
#include "worker/watchdog.h"

namespace fabricmap::worker {

// What a step returns: its /steps record and its rows (one table per step kind; rank 0 only).
template <class R>
struct Result {
  using Record = R;
  core::StepRecord step;
  std::vector<R> rows;
};
using StepResult = Result<core::CollectiveRecord>;   // one row per group
using PairResult = Result<core::PairRecord>;         // one row per pair of the round
using CopyResult = Result<core::CopyRecord>;         // one row per node and method
using ScalingResult = Result<core::ScalingRecord>;   // the slowest group's figures
using TrainingResult = Result<core::TrainingRecord>; // one row per traffic type that ran
using StorageResult = Result<core::StorageRecord>;   // rows per reading rank, per node, the whole job

// The spec a group of `nranks` runs for `step` (shape and test pattern included).
CollectiveSpec specFor(const core::CollectiveStep& step, int nranks);
// What every pair of a pairwise round streams.
PairSpec pairSpecFor(const core::PairStep& step);

// What names a step in /steps (kind, scope, op, dtype, redop, bytes, placement, groups): the
// record a run of it fills in, and what a resumed run matches a recorded step against.
core::StepRecord stepHeader(const core::Plan& plan, const core::CollectiveStep& step);
core::StepRecord stepHeader(const core::Plan& plan, const core::CopyStep& step);
core::StepRecord stepHeader(const core::Plan& plan, const core::PairStep& step);
core::StepRecord stepHeader(const core::Plan& plan, const core::ScalingStep& step);
core::StepRecord stepHeader(const core::Plan& plan, const core::TrainingStep& step);
core::StepRecord stepHeader(const core::Plan& plan, const core::StorageStep& step);

// Before anything is measured: every reading rank of the plan's storage steps checks its path
// (worker/storage.h storageProblem); where any cannot, every rank throws the same UsageError
// naming the first. Collective over `world`; nothing when the plan has no storage steps.
void checkStorage(MPI_Comm world, const core::Plan& plan);

class Executor {
 public:
  // `faults` are test-only injections (empty in real runs).
  Executor(MPI_Comm world, Backend& backend, const core::Plan& plan,
           const core::Topology& topology, std::vector<core::Fault> faults = {});
  Backend& backend() { return backend_; }

  // Who hears of each step's progress (the watchdog); none by default.
  void setObserver(StepObserver* observer) { observer_ = observer; }

  // Why `step` will not run (the plan's or the backend's reason), empty when it runs. Local and
  // deterministic: every rank gets the same answer.
  std::string waiver(const core::CollectiveStep& step) const;

  // Collective over the world communicator: every rank calls it for every step, in plan order.
  // Ranks outside the step's groups sleep until the groups are done.
  StepResult run(const core::CollectiveStep& step);

  // One GPU pair copying on every node at once; collective over the world communicator like
  // run() above. Ranks outside the pair sleep until the copies are done.
  CopyResult run(const core::CopyStep& step);

  // One round of pairwise transfers; collective over the world communicator like run() above.
  // Ranks without a partner this round sleep until the pairs are done.
  PairResult run(const core::PairStep& step);

  // One scaling point: every group runs the all_reduce at once; collective over the world
  // communicator like run() above.
  ScalingResult run(const core::ScalingStep& step);

  // One measurement of the training pattern: `iters` training steps of the step's traffic types,
  // each step started on every rank together (a world barrier); collective over the world
  // communicator like run() above.
  TrainingResult run(const core::TrainingStep& step);

  // One storage test on every reading rank at once (worker/storage.h); collective over the world
  // communicator like run() above. A rank's I/O error is every rank's UsageError (the run's own
  // files removed first).
  StorageResult run(const core::StorageStep& step);

 private:
  struct RankReport;
  // Warm-up, timed iterations and check of `step` in this rank's `group` (group id `groupId`).
  RankReport measureCollective(const core::CollectiveStep& step, const Communicator& group, int groupId);
  // This rank's communicator of every traffic type and the runner over them, made once.
  TrafficRunner& traffic();
  void enterScope(int scopeIndex);
  // Whether `fault` applies to this rank in step `index` (op: a collective's, none otherwise).
  bool matches(const core::Fault& fault, int index, std::optional<core::Op> op) const;
  // Injected error, stall or crash faults of step `index` (op: a collective's), on this rank.
  void injectAtStart(int index, std::optional<core::Op> op) const;
  void report(int step, StepPhase phase) const {
    if (observer_ != nullptr) observer_->phase(step, phase);
  }

  MPI_Comm world_;
  Backend& backend_;
  const core::Plan& plan_;
  const core::Topology& topology_;
  std::vector<core::Fault> faults_;
  StepObserver* observer_ = nullptr;
  int rank_ = 0;
  int size_ = 0;
  int scopeIndex_ = -1;
  int group_ = -1;  // this rank's group in the current scope, -1 if none
  Communicator groupComm_;
  std::vector<Communicator> trafficComms_;  // per Plan::traffic entry
  std::unique_ptr<TrafficRunner> traffic_;
  TypicalWindows typical_;
  // This rank's pair with `peer`: its kind in TypicalWindows.
  std::size_t kindOf(bool nodeLevel, int peer) const;
  // Before the first round of a level, when nothing is typical yet: the pair's one probe one way
  // (or one window, where the step has no probe), the typical's first sample.
  TypicalWindows::Sample firstWindow(const core::PairStep& step, int peer, bool leads, const Communicator& phase);
};

// The row type a step kind's run returns.
template <class S>
using RecordOf = typename decltype(std::declval<Executor&>().run(std::declval<const S&>()))::Record;

}  // namespace fabricmap::worker
