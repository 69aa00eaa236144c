// Running a plan's steps (orchestrator/run): what every step goes through on every rank (progress,
// the watchdog's deadline, a resumed run's recorded steps) and each step kind's loop, feeding
// rank 0's sinks and, for the matrix phases, its matrix builder and the analysis.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "core/plan.h"
#include "core/records.h"
#include "core/sink.h"
#include "orchestrator/run/planner.h"
#include "orchestrator/run/progress.h"
#include "orchestrator/run/resume.h"
#include "orchestrator/run/run_config.h"
#include "results/h5_writer.h"
#include "results/journal.h"
#include "worker/executor.h"
#include "worker/watchdog.h"

namespace fabricmap::orchestrator {

// A measurement that got wrong data, said at the end of the run (exit 1).
struct WrongResult {
  std::string what;
};

// Rank 0's real time for its own work (core::RankZeroCosts): the steady clock, which SMPI leaves
// real where it simulates MPI_Wtime.
class RealTimer {
 public:
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// Adds the real seconds of its scope to `total`.
class Charged {
 public:
  explicit Charged(double& total) : total_(total) {}
  Charged(const Charged&) = delete;
  Charged& operator=(const Charged&) = delete;
  ~Charged() { total_ += timer_.seconds(); }

 private:
  double& total_;
  RealTimer timer_;
};

// Rank 0's sinks, fed by one caller at a time: the main thread, or the watchdog's thread
// recording a hang while the main thread is stuck in MPI. Counts the real time spent feeding them.
class Sinks {
 public:
  void add(core::RecordSink* sink) { sinks_.push_back(sink); }
  template <class F>
  void each(F&& feed) {
    std::lock_guard lock(mutex_);
    const RealTimer timer;
    for (auto* s : sinks_) feed(*s);
    seconds_ += timer.seconds();
  }
  // Gives up after `wait` when the main thread holds the sinks (stuck writing the file).
  template <class F>
  bool tryEach(F&& feed, std::chrono::seconds wait) {
    std::unique_lock lock(mutex_, wait);
    if (!lock) return false;
    for (auto* s : sinks_) feed(*s);
    return true;
  }
  // Real seconds spent in each() so far.
  double seconds() const { return seconds_; }

 private:
  std::vector<core::RecordSink*> sinks_;
  std::timed_mutex mutex_;
  double seconds_ = 0;
};

// A resumed run's state: which steps come from the file (every rank), the records (rank 0),
// and the file sinks to publish once those are in again (rank 0).
struct Resuming {
  bool root = false;
  std::vector<char> recorded;  // per step index: taken from the file, not run
  Replay replay;               // rank 0
  results::H5Sink* file = nullptr;
  results::JournalSink* journal = nullptr;
  bool published = true;  // a new run's files are published when they begin

  bool has(int index) const {
    return index >= 0 && static_cast<std::size_t>(index) < recorded.size() && recorded[static_cast<std::size_t>(index)];
  }
  // The new journal holds every recorded step: from now on it is the run (the journal first,
  // since readers prefer it; then the HDF5 file replaces the stopped run's).
  void publish() {
    if (published) return;
    if (journal != nullptr) journal->publish();
    if (file != nullptr) file->publish();
    published = true;
  }
};

// What every step goes through on every rank: the progress line, the watchdog's deadline, and
// (rank 0) the sinks its records go to.
struct Steps {
  const RunConfig& config;
  const core::Topology& topology;
  const FabricClaims& claims;
  Progress& progress;
  worker::Watchdog& watchdog;
  Sinks& sinks;
  Resuming& resuming;
  core::RankZeroCosts costs = {};  // rank 0: planning and analysis so far (the sinks count their own)
  // Runs `step` on every rank, or takes it from the resumed file (rank 0's records; nothing
  // happens elsewhere). The result is rank 0's.
  template <class S>
  auto run(const S& step, worker::Executor& executor) {
    if (resuming.has(step.index)) {
      progress.recorded(step.index);
      return resuming.root ? resuming.replay.result(step) : decltype(executor.run(step)){};
    }
    resuming.publish();
    progress.starting(step.index);
    watchdog.stepStarted(step.index, stepDeadline(step, config));
    auto result = executor.run(step);
    watchdog.idle();
    progress.finished(step.index);
    return result;
  }
};

// Runs every step of `plan` in order (core::Plan::stepLists), each through the one loop: the step
// on every rank (or from the resumed file), then on rank 0 its rows prepared (noise flags,
// derived figures), recorded to the sinks, and followed up (wrong data is a data_corruption
// finding and a WrongResult; pairs and copies feed the matrices). A step kind without its own
// follow-up needs nothing here. Around the kinds: the training layout before the training
// steps, the scaling verdict after the scaling points, and after the pairwise rounds the
// retests of the pairs that looked slow (rank 0 decides, tells everyone; `plan` grows by them),
// then the matrices and the findings on rank 0.
void runPlan(const core::Topology& topology, core::Plan& plan, worker::Executor& executor, Steps& steps,
             std::vector<WrongResult>& wrong);

}  // namespace fabricmap::orchestrator
