// The watchdog: every step has a deadline, and no rank may hang past it. Each rank reports its
// progress to rank 0 out of band (UDP datagrams, sent from a thread of its own and on every
// change, so a rank stuck in a collective, or stopped, is seen by what it no longer says). When
// a step overruns its deadline, rank 0's watchdog judges which ranks hold it up and hands that to
// the run (which records a `hang` finding and ends the job, exit 3). Every other rank ends itself
// a grace period later, which covers a rank 0 that is itself stuck or gone. No MPI call is made
// off the main thread. In the sim build (SimGrid SMPI) it is off: see Watchdog::Watchdog.
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/hang.h"

namespace fabricmap::worker {

// The hang verdict itself (who holds up a step) is pure logic in core/hang.h.
using core::HangVerdict;
using core::judgeHang;
using core::RankProgress;
using core::StepPhase;

// What the executor tells about its progress (the watchdog listens).
class StepObserver {
 public:
  virtual ~StepObserver() = default;
  virtual void phase(int step, StepPhase phase) = 0;
};

class Watchdog final : public StepObserver {
 public:
  struct Hang {
    int step = 0;
    double waitedSeconds = 0;
    double deadlineSeconds = 0;
    HangVerdict verdict;
  };
  // Called on rank 0's watchdog thread when a step overruns; it must end the process.
  using OnHang = std::function<void(const Hang&)>;

  // Collective over `world`: rank 0 opens its socket and tells everyone where it listens. Other
  // ranks end themselves `graceSeconds` after their own deadline.
  Watchdog(MPI_Comm world, double graceSeconds, OnHang onHang);
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  ~Watchdog() override;

  // Main thread: step `step` begins now and must end within `deadlineSeconds`.
  void stepStarted(int step, double deadlineSeconds);
  void phase(int step, StepPhase phase) override;
  // No deadline until the next stepStarted (between phases, after the last step).
  void idle();

  // Seconds a rank may be silent before rank 0 calls it unresponsive.
  static constexpr double kSilentAfter = 3.0;
  // Seconds of quiet (two missed beats) after which rank 0 waits for a rank to turn silent
  // before judging an overrun step.
  static constexpr double kQuietAfter = 1.2;

 private:
  void loop();
  void beat();
  void receive();
  void checkDeadline();

  int rank_ = 0;
  int size_ = 0;
  double grace_;
  OnHang onHang_;
  int socket_ = -1;
  std::vector<std::vector<std::uint8_t>> targets_;  // rank 0's addresses (sockaddr_in bytes)
  std::atomic<int> step_{-1};
  std::atomic<int> phase_{0};
  std::atomic<std::int64_t> startNs_{0};
  std::atomic<double> deadline_{0};  // 0: none
  std::atomic<bool> stop_{false};
  // rank 0: what each rank said last, and when (steady clock, ns)
  std::vector<RankProgress> heard_;
  std::vector<std::int64_t> heardAt_;
  std::thread thread_;
};

}  // namespace fabricmap::worker
