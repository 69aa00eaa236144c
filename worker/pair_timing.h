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

// What a probe's time is multiplied by to read as a window's: their bytes' ratio.
inline double probeScale(const PairSpec& spec) {
  return static_cast<double>(spec.bytes) * spec.window /
         (static_cast<double>(spec.probeBytes) * std::max(spec.probeMessages, 1));
}

// A probe (where `probe()` sends one: it returns false for a backend without): a window of
// spec.probeMessages of spec.probeBytes, timed, up to spec.probes times while either side's took
// past its spec.slowProbe (0: this side judges none). Past it every time, the pair is clearly slow
// and the probe, scaled to a window's bytes, is its figure. `agree` settles each verdict on both
// sides; whether there is a probe at all must not depend on one side's history, or the two would
// part. `took`: the last probe's seconds (0: none).
template <class Agree, class Probe>
std::optional<PairRunner::Timing> probeFirst(const PairSpec& spec, Agree agree, Probe probe, double& took) {
  took = 0;
  if (spec.probeMessages <= 0) return std::nullopt;
  for (int attempt = 0; attempt < std::max(spec.probes, 1); ++attempt) {
    const double begin = MPI_Wtime();
    if (!probe()) return std::nullopt;
    took = MPI_Wtime() - begin;
    const bool slow = spec.slowProbe > 0 && took > spec.slowProbe;
    if (agree(slow ? 0 : 1) > 0) return std::nullopt;
  }
  return PairRunner::Timing{took * probeScale(spec), 0, 1, true, took};
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
  double probed = 0;
  if (auto slow = probeFirst(spec, agree, probe, probed)) return *slow;
  double lastWarm = 0;
  for (int i = 0; i < spec.warmup; ++i) {
    const double begin = MPI_Wtime();
    window(i + 1 == spec.warmup);
    lastWarm = MPI_Wtime() - begin;
  }
  const bool clearlySlow = spec.warmup > 0 && spec.slowWindow > 0 && lastWarm > spec.slowWindow;
  const int iters = agree(clearlySlow ? 0 : spec.iters);
  if (iters <= 0 && spec.warmup > 0) return {lastWarm, 0, 1, true, probed};
  std::vector<double> iterations(static_cast<std::size_t>(std::max(iters, 0)));
  const double start = MPI_Wtime();
  double last = start;
  for (std::size_t i = 0; i < iterations.size(); ++i) {
    window(i + 1 == iterations.size());
    const double now = MPI_Wtime();
    iterations[i] = now - last;
    last = now;
  }
  return {last - start, core::summarize(std::move(iterations)).cv, iters, false, probed};
}

// The same for a backend without a probe.
template <class Sync, class Agree, class Window>
PairRunner::Timing timeWindows(const PairSpec& spec, Sync sync, Agree agree, Window window) {
  return timeWindows(spec, sync, agree, window, [] { return false; });
}

// The last few seconds of one kind of window (or probe), and their median: what a healthy pair's
// takes, so that one many times slower is clearly slow (TypicalWindows keeps them).
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

// A warm window or a probe this many times the typical one (TypicalWindows) marks a pair clearly
// slow (PairSpec::slowWindow, slowProbe): such a pair reads below an eighth of its peers' rate, far under the bar
// of half that where a pair is measured again; two or three streams meeting on one cable stay
// well above it.
inline constexpr double kClearlySlow = 8;

// A probe's bytes: as many of the stream's messages as make them, or one message of them where
// the stream's are larger. No more, since a clearly slow pair's round waits for its probes (at 1%
// of the rate a mebibyte probe held its round four healthy rounds long), and at least so much
// that a clearly slow pair's probe is mostly its data: latency (a rendezvous and the
// acknowledgement, several microseconds) lowers the rate a probe of a pair at an eighth of it
// reads by about a fifth, and the probe is that pair's figure. A probe is judged against the
// typical probe, latency and all (TypicalWindows), never a window's share. A window it goes
// before holds four probes at least.
inline constexpr std::uint64_t kProbeBytes = 256 << 10;
inline constexpr int kProbesAWindow = 4;

// The probe of a pair step's windows (PairSpec::probeMessages, probeBytes, slowProbe): kProbeBytes
// as above, where a window holds kProbesAWindow such probes (from the step alone, the same on both
// sides), clearly slow past kClearlySlow times the typical probe (`typical`, seconds; 0 while not
// known: then none is judged).
inline void setProbe(PairSpec& spec, double typical) {
  const auto bytes = std::max<std::uint64_t>(spec.bytes, 1);
  const std::uint64_t each = std::min(bytes, kProbeBytes);
  const auto messages = static_cast<int>((kProbeBytes + each - 1) / each);
  if (static_cast<double>(bytes) * spec.window < static_cast<double>(kProbesAWindow * messages * each)) return;
  spec.probeMessages = messages;
  spec.probeBytes = each;
  spec.slowProbe = typical > 0 ? kClearlySlow * typical : 0;
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
