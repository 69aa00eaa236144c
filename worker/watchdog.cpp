// The watchdog (see watchdog.h).
#include "worker/watchdog.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/config.h"
#include "core/error.h"
#include "worker/mpi_check.h"

namespace fabricmap::worker {
namespace {

constexpr std::uint32_t kMagic = 0x666d7764;  // "fmwd"
constexpr int kMaxAddresses = 16;
constexpr auto kBeatEvery = std::chrono::milliseconds(500);

struct Datagram {
  std::uint32_t magic;
  std::int32_t rank;
  std::int32_t step;
  std::int32_t phase;
};

// Where rank 0 listens: its IPv4 addresses (every interface: ranks on other hosts or in other
// network namespaces reach it through one of them) and the port.
struct Listener {
  std::int32_t count = 0;
  std::uint16_t port = 0;
  std::uint32_t addresses[kMaxAddresses] = {};  // network byte order
};

std::int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Listener openListener(int& fd) {
  Listener l;
  fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return l;
  sockaddr_in any{};
  any.sin_family = AF_INET;
  any.sin_addr.s_addr = htonl(INADDR_ANY);
  any.sin_port = 0;
  socklen_t len = sizeof any;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&any), sizeof any) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&any), &len) != 0) {
    ::close(fd);
    fd = -1;
    return l;
  }
  l.port = any.sin_port;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) == 0) {
    for (ifaddrs* i = list; i != nullptr && l.count < kMaxAddresses; i = i->ifa_next) {
      if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
      l.addresses[l.count++] = reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr;
    }
    ::freeifaddrs(list);
  }
  return l;
}

}  // namespace

Watchdog::Watchdog(MPI_Comm world, double graceSeconds, OnHang onHang)
    : grace_(graceSeconds), onHang_(std::move(onHang)) {
  FM_MPI(MPI_Comm_rank(world, &rank_));
  FM_MPI(MPI_Comm_size(world, &size_));
  // Off in the sim build: its deadlines are in real time, which on SimGrid measures the simulator,
  // not the simulated job; SimGrid itself ends a simulation whose ranks all wait (a deadlock).
  if constexpr (FABRICMAP_HAVE_SIM) return;
  Listener listener;
  if (rank_ == 0) {
    listener = openListener(socket_);
    heard_.assign(static_cast<std::size_t>(size_), RankProgress{});
    heardAt_.assign(static_cast<std::size_t>(size_), nowNs());
  }
  FM_MPI(MPI_Bcast(&listener, sizeof listener, MPI_BYTE, 0, world));
  if (rank_ != 0) socket_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  for (int i = 0; i < listener.count && listener.port != 0; ++i) {
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = listener.port;
    to.sin_addr.s_addr = listener.addresses[i];
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(&to);
    targets_.emplace_back(bytes, bytes + sizeof to);
  }
  thread_ = std::thread([this] { loop(); });
}

Watchdog::~Watchdog() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (socket_ >= 0) ::close(socket_);
}

void Watchdog::stepStarted(int step, double deadlineSeconds) {
  startNs_ = nowNs();
  phase_ = static_cast<int>(StepPhase::kStarting);
  step_ = step;
  deadline_ = deadlineSeconds;
  beat();
}

void Watchdog::phase(int step, StepPhase phase) {
  if (step != step_) return;
  phase_ = static_cast<int>(phase);
  beat();
}

void Watchdog::idle() { deadline_ = 0; }

void Watchdog::beat() {
  if (rank_ == 0 || socket_ < 0) return;  // rank 0 reads its own state directly
  const Datagram d{kMagic, rank_, step_.load(), phase_.load()};
  for (const auto& to : targets_) {
    ::sendto(socket_, &d, sizeof d, MSG_DONTWAIT, reinterpret_cast<const sockaddr*>(to.data()),
             static_cast<socklen_t>(to.size()));
  }
}

void Watchdog::receive() {
  if (socket_ < 0) return;
  Datagram d{};
  while (::recv(socket_, &d, sizeof d, MSG_DONTWAIT) == static_cast<ssize_t>(sizeof d)) {
    if (d.magic != kMagic || d.rank <= 0 || d.rank >= size_) continue;
    const auto r = static_cast<std::size_t>(d.rank);
    heard_[r].step = d.step;
    heard_[r].phase = static_cast<StepPhase>(std::clamp(d.phase, 0, 2));
    heardAt_[r] = nowNs();
  }
}

void Watchdog::checkDeadline() {
  const double deadline = deadline_;
  if (deadline <= 0) return;
  const double waited = static_cast<double>(nowNs() - startNs_) / 1e9;
  if (rank_ != 0) {
    if (waited <= deadline + grace_) return;
    // rank 0 should have ended the job by now: it is stuck or gone
    fmt::print(stderr,
               "fabricmap run: error on rank {}: step {} has run {:.0f} s, past its {:.0f} s deadline, and rank "
               "0 did not end the job; ending it (exit 3)\n",
               rank_, step_.load(), waited, deadline);
    std::fflush(stderr);
    std::_Exit(static_cast<int>(core::ExitCode::kRuntimeFault));
  }
  if (waited <= deadline) return;
  const int step = step_;
  std::vector<RankProgress> ranks = heard_;
  const std::int64_t now = nowNs();
  bool falling = false;  // a rank that missed a beat or two but is not yet called silent
  for (std::size_t r = 1; r < ranks.size(); ++r) {
    ranks[r].silentSeconds = static_cast<double>(now - heardAt_[r]) / 1e9;
    falling = falling || (ranks[r].silentSeconds > kQuietAfter && ranks[r].silentSeconds <= kSilentAfter);
  }
  // let a rank that just went quiet become silent before judging, or the step is blamed on
  // everyone but the rank that stopped
  if (falling && waited <= deadline + kSilentAfter) return;
  ranks[0] = RankProgress{step, static_cast<StepPhase>(phase_.load()), 0.0};
  Hang hang;
  hang.step = step;
  hang.waitedSeconds = waited;
  hang.deadlineSeconds = deadline;
  hang.verdict = judgeHang(step, ranks, kSilentAfter);
  onHang_(hang);
  std::_Exit(static_cast<int>(core::ExitCode::kRuntimeFault));  // onHang must not return; if it does, end anyway
}

void Watchdog::loop() {
  auto nextBeat = std::chrono::steady_clock::now();
  while (!stop_) {
    if (std::chrono::steady_clock::now() >= nextBeat) {
      beat();
      nextBeat = std::chrono::steady_clock::now() + kBeatEvery;
    }
    if (rank_ == 0 && socket_ >= 0) {
      pollfd p{socket_, POLLIN, 0};
      ::poll(&p, 1, 100);
      receive();
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    checkDeadline();
  }
}

}  // namespace fabricmap::worker
