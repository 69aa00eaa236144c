// The shape of the MPI backend's pair streams, under mpiexec -n 2: one rank runs fabricmap's
// PairRunner, the other plays the opposite side of OSU's loops (osu_bw, osu_bibw, osu_latency) and
// watches what arrives, so a stream that stopped acknowledging per window, ignored its window or
// changed its warm-up fails here. What rank 1 saw is sent to rank 0, which checks it (only rank 0
// prints). A peer that waits too long aborts the job: a broken shape fails instead of hanging.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "worker/mpi/pairs.h"
#include "worker/pair_timing.h"

namespace fabricmap::worker {
namespace {

constexpr int kMarker = 0x7e;      // a tag the runner never uses: "the runner returned"
constexpr double kDeadline = 20;   // seconds a peer waits for a message before it gives up

int worldRank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

[[noreturn]] void abandon(const std::string& why) {
  std::fprintf(stderr, "rank %d: %s\n", worldRank(), why.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

// Whether a message of `tag` (MPI_ANY_TAG: any) from `source` arrives within `seconds`.
bool arrivesWithin(int source, int tag, double seconds, MPI_Status* status = MPI_STATUS_IGNORE) {
  const double until = MPI_Wtime() + seconds;
  while (true) {
    int flag = 0;
    MPI_Iprobe(source, tag, MPI_COMM_WORLD, &flag, status);
    if (flag) return true;
    if (MPI_Wtime() >= until) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));  // leave the core to the other rank
  }
}

// Rank 1's observations, checked on rank 0.
template <typename T>
T toRoot(const T& value) {
  T out = value;
  if (worldRank() == 1) MPI_Send(&value, sizeof(T), MPI_BYTE, 0, kMarker + 1, MPI_COMM_WORLD);
  if (worldRank() == 0) MPI_Recv(&out, sizeof(T), MPI_BYTE, 1, kMarker + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return out;
}

MPI_Status await(int source, int tag, const char* what) {
  MPI_Status status;
  if (!arrivesWithin(source, tag, kDeadline, &status)) abandon(std::string("no ") + what + " arrived");
  return status;
}

// The zero-byte handshake that starts each of the runner's streams and ping-pongs.
void answerSync(int peer) {
  await(peer, mpi::kTagSync, "handshake");
  MPI_Sendrecv(nullptr, 0, MPI_BYTE, peer, mpi::kTagSync, nullptr, 0, MPI_BYTE, peer, mpi::kTagSync,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

// The handshake before the timed windows, which carries each side's count of them: returns the
// fewer of the runner's and `mine`.
int answerCount(int peer, int mine) {
  await(peer, mpi::kTagSync, "count handshake");
  int theirs = 0;
  MPI_Sendrecv(&mine, 1, MPI_INT, peer, mpi::kTagSync, &theirs, 1, MPI_INT, peer, mpi::kTagSync, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  return std::min(mine, theirs);
}

PairSpec specOf(std::uint64_t bytes, int window) {
  PairSpec spec;
  spec.bytes = bytes;
  spec.window = window;
  spec.iters = 3;
  spec.warmup = 2;
  spec.latencyIters = 20;
  return spec;
}

struct Buffers {
  explicit Buffers(std::uint64_t bytes) : send(bytes), receive(bytes) {}
  std::vector<std::byte> send;
  std::vector<std::byte> receive;
};

// What osu_bw's receiver saw of the runner's one-way stream.
struct ReceiverLog {
  int windows = 0;
  int messages = 0;
  int early = 0;  // windows after which data came before the acknowledgement went back
  int timed = 0;  // the timed windows both sides agreed on
  int probes = 0;  // probe windows (PairSpec::probeMessages) taken
  int probeBytes = 0;  // the size of the last probe message
};

// osu_bw's receiver, watching: per window it takes `window` messages, holds the acknowledgement
// back for `hold` seconds while checking that nothing more arrives (the sender must be waiting for
// it), then acknowledges with osu_bw's 4 bytes. It asks for `count` timed windows.
ReceiverLog receiveLikeOsuBw(int sender, const PairSpec& spec, Buffers& b, double hold, int count) {
  ReceiverLog log;
  const std::array<char, mpi::kAckBytes> ack{};
  int bytes = 0;
  const auto windows = [&](int n, int messages) {
    for (int i = 0; i < n; ++i) {
      for (int m = 0; m < messages; ++m) {
        await(sender, mpi::kTagData, "window message");
        MPI_Status status;
        MPI_Recv(b.receive.data(), static_cast<int>(spec.bytes), MPI_BYTE, sender, mpi::kTagData,
                 MPI_COMM_WORLD, &status);
        MPI_Get_count(&status, MPI_BYTE, &bytes);
        ++log.messages;
      }
      if (arrivesWithin(sender, mpi::kTagData, hold)) ++log.early;
      MPI_Send(ack.data(), mpi::kAckBytes, MPI_CHAR, sender, mpi::kTagAck, MPI_COMM_WORLD);
      ++log.windows;
    }
  };
  answerSync(sender);
  // the runner's probes: this side finds none slow, the runner's verdict decides
  const bool probes = spec.probeMessages > 0;
  for (int i = 0; probes && i < std::max(spec.probes, 1); ++i) {
    windows(1, spec.probeMessages);
    ++log.probes;
    log.probeBytes = bytes;
    if (answerCount(sender, 1) > 0) break;
    if (i + 1 == std::max(spec.probes, 1)) return log;
  }
  windows(spec.warmup, spec.window);
  log.timed = answerCount(sender, count);
  windows(log.timed, spec.window);
  return log;
}

// The runner sends one way to osu_bw's receiver, which holds each acknowledgement back for `hold`
// seconds; returns the sender's time on rank 0, the receiver's log on rank 1.
struct OneWay {
  PairRunner::Timing timing;
  ReceiverLog log;
};

OneWay oneWayAgainstOsuReceiver(const PairSpec& spec, double hold, int count = -1) {
  Buffers b(spec.bytes);
  OneWay result;
  MPI_Barrier(MPI_COMM_WORLD);
  if (worldRank() == 0) {
    result.timing = mpi::makePairRunner(MPI_COMM_WORLD, spec, b.send.data(), b.receive.data())->stream(1, true, false);
  } else {
    result.log = receiveLikeOsuBw(0, spec, b, hold, count < 0 ? spec.iters : count);
  }
  result.log = toRoot(result.log);
  MPI_Barrier(MPI_COMM_WORLD);
  return result;
}

// Each window of the default 64 and of a chosen 8 messages is acknowledged before the next one
// starts: exactly `window` messages per acknowledgement, none early.
TEST(MpiPairShape, OneWaySendsAWindowThenWaitsForItsAcknowledgement) {
  for (const int window : {64, 8, 1}) {
    const PairSpec spec = specOf(1024, window);  // eager messages: only the acknowledgement can hold the sender
    const OneWay r = oneWayAgainstOsuReceiver(spec, 0.02);
    if (worldRank() != 0) continue;
    EXPECT_EQ(r.log.windows, spec.warmup + spec.iters) << "window " << window;
    EXPECT_EQ(r.log.messages, (spec.warmup + spec.iters) * window) << "window " << window;
    EXPECT_EQ(r.log.early, 0) << "window " << window << ": the sender did not wait for the acknowledgement";
  }
}

// A receiver that holds each acknowledgement back slows every timed window by that much: the
// sender's time covers one acknowledgement per window, not one per stream.
TEST(MpiPairShape, AHeldAcknowledgementSlowsEveryWindow) {
  const PairSpec spec = specOf(64 << 10, 64);
  const double hold = 0.05;
  const OneWay prompt = oneWayAgainstOsuReceiver(spec, 0);
  const OneWay held = oneWayAgainstOsuReceiver(spec, hold);
  if (worldRank() != 0) return;
  EXPECT_GE(held.timing.seconds, spec.iters * hold);
  EXPECT_GT(held.timing.seconds - prompt.timing.seconds, 0.8 * spec.iters * hold)
      << "prompt " << prompt.timing.seconds << " s, held " << held.timing.seconds << " s";
}

// A last warm window slower than the spec's slowWindow marks the pair clearly slow: that window is
// its figure, the runner asks for no timed window, and the peer's larger count gives way to it.
// One window is a figure of the same shape, in a fraction of the time.
TEST(MpiPairShape, AClearlySlowPairIsTimedByItsLastWarmWindow) {
  PairSpec spec = specOf(64 << 10, 8);
  spec.iters = 6;
  spec.slowWindow = 0.01;  // each window is held 0.05 s
  const OneWay slow = oneWayAgainstOsuReceiver(spec, 0.05);
  if (worldRank() == 0) {
    EXPECT_EQ(slow.log.timed, 0);
    EXPECT_EQ(slow.timing.iters, 1);
    EXPECT_EQ(slow.log.windows, spec.warmup);
    EXPECT_GE(slow.timing.seconds, 0.05);
    EXPECT_LT(slow.timing.seconds, 0.05 * 2);
  }
  // under the bound the stream runs its windows
  spec.slowWindow = 10;
  const OneWay steady = oneWayAgainstOsuReceiver(spec, 0.05);
  if (worldRank() == 0) {
    EXPECT_EQ(steady.timing.iters, spec.iters);
    EXPECT_EQ(steady.log.windows, spec.warmup + spec.iters);
  }
}

// The probe is a quarter mebibyte: the stream's messages that make it, or one shorter message
// where they are larger. It goes before windows of four probes at least, whatever either side has
// measured (both must probe or neither); it is clearly slow past eight times the typical probe,
// and not judged while none is known.
TEST(MpiPairShape, TheProbeIsAQuarterMebibyteBeforeWindowsOfFourProbes) {
  struct Probe {
    int messages;
    std::uint64_t bytes;
    double slow;
    bool operator==(const Probe&) const = default;
  };
  const auto probed = [](std::uint64_t bytes, int window, double healthy) {
    PairSpec spec = specOf(bytes, window);
    setProbe(spec, healthy);
    return Probe{spec.probeMessages, spec.probeBytes, spec.slowProbe};
  };
  EXPECT_EQ(probed(1 << 20, 4, 1e-4), (Probe{1, 256 << 10, kClearlySlow * 1e-4}));
  EXPECT_EQ(probed(64 << 10, 64, 1e-3), (Probe{4, 64 << 10, kClearlySlow * 1e-3}));
  EXPECT_EQ(probed(100 << 10, 64, 1e-3).messages, 3);  // 300 KiB: a quarter mebibyte at least
  EXPECT_EQ(probed(4 << 20, 4, 1e-3).bytes, 256u << 10);
  EXPECT_EQ(probed(256 << 10, 4, 1e-4).messages, 1);
  EXPECT_EQ(probed(64 << 10, 8, 1e-4).messages, 0);  // 4 a probe, 2 probes a window
  EXPECT_EQ(probed(1 << 20, 4, 0), (Probe{1, 256 << 10, 0.0}));  // no typical probe yet: probed, not judged
}

// A probe (a short window before the stream's) that takes past slowProbe every time marks the pair
// clearly slow: the probe, scaled to a window's messages, is its figure and no window is sent,
// however many the peer would take. Under the bound one probe goes before the windows.
TEST(MpiPairShape, AClearlySlowPairIsTimedByItsProbe) {
  PairSpec spec = specOf(64 << 10, 8);
  spec.probeMessages = 2;
  spec.probeBytes = spec.bytes;
  spec.probes = 2;
  spec.slowProbe = 0.01;  // each probe's acknowledgement is held 0.05 s
  const OneWay slow = oneWayAgainstOsuReceiver(spec, 0.05);
  if (worldRank() == 0) {
    EXPECT_EQ(slow.log.probes, 2);
    EXPECT_EQ(slow.log.messages, 2 * spec.probeMessages);
    EXPECT_EQ(slow.log.windows, 2);
    EXPECT_EQ(slow.timing.iters, 1);
    const double scale = static_cast<double>(spec.window) / spec.probeMessages;
    EXPECT_GE(slow.timing.seconds, 0.05 * scale);
    EXPECT_LT(slow.timing.seconds, 0.05 * scale * 2);
  }
  spec.slowProbe = 10;
  const OneWay steady = oneWayAgainstOsuReceiver(spec, 0.05);
  if (worldRank() == 0) {
    EXPECT_EQ(steady.log.probes, 1);
    EXPECT_EQ(steady.timing.iters, spec.iters);
    EXPECT_EQ(steady.log.messages, spec.probeMessages + (spec.warmup + spec.iters) * spec.window);
  }
}

// Only a pair's first stream may set its connection up: the runner's later streams probe once.
// A pair clearly slow on both sides checks a probe's bytes, not a message's.
TEST(MpiPairShape, AfterTheFirstStreamAPairProbesOnceAndChecksAProbesBytes) {
  PairSpec spec = specOf(1 << 20, 4);
  setProbe(spec, 1e-9);  // every probe is past the bar
  spec.probes = 2;
  spec.slowProbe = 0.01;  // each probe's acknowledgement is held 0.05 s
  Buffers b(spec.bytes);
  std::array<ReceiverLog, 2> logs{};
  int checked = 0;  // the checked transfer's bytes, as rank 1 saw them
  MPI_Barrier(MPI_COMM_WORLD);
  if (worldRank() == 0) {
    auto runner = mpi::makePairRunner(MPI_COMM_WORLD, spec, b.send.data(), b.receive.data());
    for (int stream = 0; stream < 2; ++stream) EXPECT_TRUE(runner->stream(1, true, false).clearlySlow) << stream;
    EXPECT_EQ(runner->checkedTransfer(1, true), 0u);
  } else {
    PairSpec later = spec;
    later.probes = 1;
    logs = {receiveLikeOsuBw(0, spec, b, 0.05, spec.iters), receiveLikeOsuBw(0, later, b, 0.05, spec.iters)};
    MPI_Status status = await(0, MPI_ANY_TAG, "checked transfer");
    if (status.MPI_TAG != mpi::kTagCheck) abandon("a second probe came before the checked transfer");
    MPI_Get_count(&status, MPI_UINT32_T, &checked);
    MPI_Recv(b.receive.data(), checked, MPI_UINT32_T, 0, mpi::kTagCheck, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    checked *= static_cast<int>(sizeof(std::uint32_t));
  }
  logs = toRoot(logs);
  checked = toRoot(checked);
  if (worldRank() == 0) {
    EXPECT_EQ(logs[0].probes, 2);
    EXPECT_EQ(logs[1].probes, 1);
    EXPECT_EQ(logs[1].probeBytes, 256 << 10);
    EXPECT_EQ(logs[1].windows, 1);  // the probe's, no window of the stream's
    EXPECT_EQ(checked, 256 << 10);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// The fewer count wins on both sides: a peer that found the pair clearly slow (count 0) cuts the
// runner's stream too, so the two never wait for a window the other will not send; a peer asking
// for fewer windows gets them.
TEST(MpiPairShape, ThePeersFewerCountIsKept) {
  const PairSpec spec = specOf(64 << 10, 8);
  for (const int count : {1, 0}) {
    const OneWay r = oneWayAgainstOsuReceiver(spec, 0, count);
    if (worldRank() != 0) continue;
    EXPECT_EQ(r.timing.iters, 1) << count;
    EXPECT_GT(r.timing.seconds, 0) << count;
    EXPECT_EQ(r.log.windows, spec.warmup + count);
    EXPECT_EQ(r.log.messages, (spec.warmup + count) * spec.window);
  }
}

// The runner as receiver acknowledges each window with osu_bw's 4 bytes, so osu_bw's own sender
// runs against it.
TEST(MpiPairShape, ReceiverAcknowledgesEachWindowLikeOsuBw) {
  const PairSpec spec = specOf(64 << 10, 16);
  Buffers b(spec.bytes);
  MPI_Barrier(MPI_COMM_WORLD);
  if (worldRank() == 1) {
    mpi::makePairRunner(MPI_COMM_WORLD, spec, b.send.data(), b.receive.data())->stream(0, false, true);
    MPI_Send(nullptr, 0, MPI_BYTE, 0, kMarker, MPI_COMM_WORLD);
  } else {
    std::vector<MPI_Request> requests(static_cast<std::size_t>(spec.window));
    int acks = 0;
    const auto windows = [&](int n) {
      for (int i = 0; i < n; ++i) {
        for (MPI_Request& r : requests) {
          MPI_Isend(b.send.data(), static_cast<int>(spec.bytes), MPI_BYTE, 1, mpi::kTagData, MPI_COMM_WORLD, &r);
        }
        MPI_Waitall(spec.window, requests.data(), MPI_STATUSES_IGNORE);
        await(1, mpi::kTagAck, "acknowledgement");
        std::array<char, 64> ack{};
        MPI_Status status;
        MPI_Recv(ack.data(), static_cast<int>(ack.size()), MPI_CHAR, 1, mpi::kTagAck, MPI_COMM_WORLD, &status);
        int count = 0;
        MPI_Get_count(&status, MPI_CHAR, &count);
        EXPECT_EQ(count, 4);
        ++acks;
      }
    };
    answerSync(1);
    windows(spec.warmup);
    windows(answerCount(1, spec.iters));
    MPI_Status next = await(1, MPI_ANY_TAG, "marker");
    EXPECT_EQ(next.MPI_TAG, kMarker) << "the receiver sent more than one acknowledgement per window";
    MPI_Recv(nullptr, 0, MPI_BYTE, 1, kMarker, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    EXPECT_EQ(acks, spec.warmup + spec.iters);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// Both ways at once is osu_bibw's loop: each side's window of receives and sends, no
// acknowledgement; osu_bibw's other side runs against it and sees nothing else.
TEST(MpiPairShape, BothWaysIsOsuBibw) {
  const PairSpec spec = specOf(64 << 10, 8);
  Buffers b(spec.bytes);
  double seconds = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  if (worldRank() == 1) {
    seconds = mpi::makePairRunner(MPI_COMM_WORLD, spec, b.send.data(), b.receive.data())->stream(0, true, true).seconds;
    MPI_Send(nullptr, 0, MPI_BYTE, 0, kMarker, MPI_COMM_WORLD);
  } else {
    std::vector<MPI_Request> requests(2 * static_cast<std::size_t>(spec.window));
    const auto windows = [&](int n) {
      for (int i = 0; i < n; ++i) {
        for (int w = 0; w < spec.window; ++w) {
          MPI_Irecv(b.receive.data(), static_cast<int>(spec.bytes), MPI_BYTE, 1, mpi::kTagData, MPI_COMM_WORLD,
                    &requests[static_cast<std::size_t>(w)]);
        }
        for (int w = 0; w < spec.window; ++w) {
          MPI_Isend(b.send.data(), static_cast<int>(spec.bytes), MPI_BYTE, 1, mpi::kTagData, MPI_COMM_WORLD,
                    &requests[static_cast<std::size_t>(spec.window + w)]);
        }
        MPI_Waitall(2 * spec.window, requests.data(), MPI_STATUSES_IGNORE);
      }
    };
    answerSync(1);
    windows(spec.warmup);
    windows(answerCount(1, spec.iters));
    MPI_Status next = await(1, MPI_ANY_TAG, "marker");
    EXPECT_EQ(next.MPI_TAG, kMarker) << "the bidirectional stream sent something osu_bibw does not";
    MPI_Recv(nullptr, 0, MPI_BYTE, 1, kMarker, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  seconds = toRoot(seconds);
  if (worldRank() == 0) {
    EXPECT_GT(seconds, 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// The ping-pong is osu_latency's: 100 untimed round trips of 8 B, then the timed ones.
TEST(MpiPairShape, PingPongRunsOsuLatencysRoundTrips) {
  const PairSpec spec = specOf(64 << 10, 64);
  Buffers b(spec.bytes);
  std::array<int, 2> seen{};  // round trips and their message size, as rank 1 saw them
  MPI_Barrier(MPI_COMM_WORLD);
  if (worldRank() == 0) {
    const double oneWay =
        mpi::makePairRunner(MPI_COMM_WORLD, spec, b.send.data(), b.receive.data())->pingPong(1, true);
    EXPECT_TRUE(std::isfinite(oneWay) && oneWay > 0) << oneWay;
    MPI_Send(nullptr, 0, MPI_BYTE, 1, kMarker, MPI_COMM_WORLD);
  } else {
    auto& [trips, bytes] = seen;
    while (true) {
      MPI_Status s = await(0, MPI_ANY_TAG, "ping");
      if (s.MPI_TAG == kMarker) {
        MPI_Recv(nullptr, 0, MPI_BYTE, 0, kMarker, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        break;
      }
      if (s.MPI_TAG == mpi::kTagSync) {
        MPI_Sendrecv(nullptr, 0, MPI_BYTE, 0, mpi::kTagSync, nullptr, 0, MPI_BYTE, 0, mpi::kTagSync,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        continue;
      }
      if (s.MPI_TAG != mpi::kTagPing) abandon("a ping-pong message with tag " + std::to_string(s.MPI_TAG));
      MPI_Get_count(&s, MPI_BYTE, &bytes);
      MPI_Recv(b.receive.data(), bytes, MPI_BYTE, 0, mpi::kTagPing, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(b.send.data(), bytes, MPI_BYTE, 0, mpi::kTagPing, MPI_COMM_WORLD);
      ++trips;
    }
  }
  seen = toRoot(seen);
  if (worldRank() == 0) {
    EXPECT_EQ(seen[0], mpi::latencySkip(spec.latencyBytes) + spec.latencyIters);
    EXPECT_EQ(seen[0], 100 + 20);
    EXPECT_EQ(seen[1], 8);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
}  // namespace fabricmap::worker
