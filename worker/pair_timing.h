// The timed loops of a pair stream and a ping-pong, shaped once for the host backends (mpi, ucx):
// what each backend brings is its handshake, one window and one round trip.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "core/stats.h"
#include "worker/backend.h"
#include "worker/mpi_check.h"

namespace fabricmap::worker {

// The fewer of two sides' counts: each sends its own and takes the smaller (a handshake, too).
inline int agreeOnFewer(MPI_Comm comm, int peer, int tag, int mine) {
  int theirs = 0;
  FM_MPI(MPI_Sendrecv(&mine, 1, MPI_INT, peer, tag, &theirs, 1, MPI_INT, peer, tag, comm, MPI_STATUS_IGNORE));
  return std::min(mine, theirs);
}

// A probe (where `probe()` sends one: it returns false for a backend without): a window of
// spec.probeMessages, timed, up to spec.probes times while either side's took past its
// spec.slowProbe (0: this side judges none). Past it every time, the pair is clearly slow and the
// probe, scaled to a window's messages, is its figure. `agree` settles each verdict on both sides;
// whether there is a probe at all must not depend on one side's history, or the two would part.
template <class Agree, class Probe>
std::optional<PairRunner::Timing> probeFirst(const PairSpec& spec, Agree agree, Probe probe) {
  if (spec.probeMessages <= 0) return std::nullopt;
  double took = 0;
  for (int attempt = 0; attempt < std::max(spec.probes, 1); ++attempt) {
    const double begin = MPI_Wtime();
    if (!probe()) return std::nullopt;
    took = MPI_Wtime() - begin;
    const bool slow = spec.slowProbe > 0 && took > spec.slowProbe;
    if (agree(slow ? 0 : 1) > 0) return std::nullopt;
  }
  return PairRunner::Timing{took * spec.window / spec.probeMessages, 0, 1};
}

// A handshake, the probe (probeFirst), `spec.warmup` untimed windows, then the timed windows:
// `spec.iters` of them, or none when either side's last warm-up window took longer than
// `spec.slowWindow` (the first ones may set up connections): that window is then the pair's
// measurement, since another window as slow would only hold the round longer. `agree(count)` is
// the handshake before the timed windows: both sides' counts, the fewer kept. `window(last)` is
// told the last warm-up window and the last timed one. The seconds from that handshake to the end
// of the last window (or the slow warm window's), how much the windows' times varied, and how
// many windows they were.
template <class Sync, class Agree, class Window, class Probe>
PairRunner::Timing timeWindows(const PairSpec& spec, Sync sync, Agree agree, Window window, Probe probe) {
  sync();
  if (auto slow = probeFirst(spec, agree, probe)) return *slow;
  double lastWarm = 0;
  for (int i = 0; i < spec.warmup; ++i) {
    const double begin = MPI_Wtime();
    window(i + 1 == spec.warmup);
    lastWarm = MPI_Wtime() - begin;
  }
  const bool clearlySlow = spec.warmup > 0 && spec.slowWindow > 0 && lastWarm > spec.slowWindow;
  const int iters = agree(clearlySlow ? 0 : spec.iters);
  if (iters <= 0 && spec.warmup > 0) return {lastWarm, 0, 1};
  std::vector<double> iterations(static_cast<std::size_t>(std::max(iters, 0)));
  const double start = MPI_Wtime();
  double last = start;
  for (std::size_t i = 0; i < iterations.size(); ++i) {
    window(i + 1 == iterations.size());
    const double now = MPI_Wtime();
    iterations[i] = now - last;
    last = now;
  }
  return {last - start, core::summarize(std::move(iterations)).cv, iters};
}

// The same for a backend without a probe.
template <class Sync, class Agree, class Window>
PairRunner::Timing timeWindows(const PairSpec& spec, Sync sync, Agree agree, Window window) {
  return timeWindows(spec, sync, agree, window, [] { return false; });
}

// The last few timed windows' seconds of one kind of pair on this rank, and their median: what a
// window of a healthy pair takes, so that a window many times slower is clearly slow.
class WindowHistory {
 public:
  static constexpr std::size_t kKept = 31;
  void add(double seconds) {
    if (!(seconds > 0)) return;
    if (kept_.size() < kKept) {
      kept_.push_back(seconds);
    } else {
      kept_[next_] = seconds;
    }
    next_ = (next_ + 1) % kKept;
  }
  // 0 while nothing is kept
  double median() const {
    if (kept_.empty()) return 0;
    std::vector<double> sorted = kept_;
    const auto mid = sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2);
    std::nth_element(sorted.begin(), mid, sorted.end());
    return *mid;
  }

 private:
  std::vector<double> kept_;
  std::size_t next_ = 0;
};

// A warm window this many times the rank's typical one (WindowHistory) marks a pair clearly slow
// (PairSpec::slowWindow): such a pair reads below an eighth of its peers' rate, far under the bar
// of half that where a pair is measured again; two or three streams meeting on one cable stay
// well above it.
inline constexpr double kClearlySlow = 8;

// A probe's bytes at least (as many messages as make them), so that it is bandwidth-bound on a
// 400 Gb/s link as a window is, and a window it goes before: of four probes at least.
inline constexpr std::uint64_t kProbeBytes = 1 << 20;
inline constexpr int kProbesAWindow = 4;

// The probe of a pair step's windows (PairSpec::probeMessages, slowProbe): messages enough for
// kProbeBytes, where a window holds kProbesAWindow such probes (from the step alone, the same on
// both sides), and the seconds past which it is clearly slow, from this side's healthy window
// (`window`, WindowHistory's median; 0 while not known: then this side judges none).
inline void setProbe(PairSpec& spec, double window) {
  const auto bytes = std::max<std::uint64_t>(spec.bytes, 1);
  const int messages = static_cast<int>(std::max<std::uint64_t>(1, (kProbeBytes + bytes - 1) / bytes));
  if (spec.window < kProbesAWindow * messages) return;
  spec.probeMessages = messages;
  spec.slowProbe = window > 0 ? kClearlySlow * window * messages / spec.window : 0;
}

// A handshake, `skip` untimed round trips, then `spec.latencyIters` timed ones: the one-way
// latency in seconds (half the mean round trip).
template <class Sync, class RoundTrip>
double timeRoundTrips(const PairSpec& spec, int skip, Sync sync, RoundTrip roundTrip) {
  double start = 0;
  sync();
  for (int i = 0; i < skip + spec.latencyIters; ++i) {
    if (i == skip) start = MPI_Wtime();
    roundTrip();
  }
  return (MPI_Wtime() - start) / (2.0 * std::max(spec.latencyIters, 1));
}

}  // namespace fabricmap::worker
