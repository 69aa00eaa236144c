// Progress output (see progress.h).
#include "orchestrator/run/progress.h"

#include <unistd.h>

#include <fmt/format.h>

#include "core/units.h"

namespace fabricmap::orchestrator {
namespace {

std::string duration(double seconds) {
  if (seconds < 60) return fmt::format("{:.0f}s", seconds);
  return fmt::format("{}m{:02}s", static_cast<int>(seconds) / 60, static_cast<int>(seconds) % 60);
}

// A step costs a fixed overhead plus time proportional to the bytes it moves.
constexpr double kStepOverheadBytes = 256.0 * 1024;
// A round trip (a pair window's acknowledgement, a ping-pong) costs a few microseconds: about what
// moving this much takes at host-memory rates.
constexpr double kRoundTripBytes = 16.0 * 1024;

}  // namespace

Progress::Progress(ProgressMode mode, std::FILE* err, const core::Plan& plan)
    : mode_(mode), err_(err), start_(std::chrono::steady_clock::now()) {
  if (mode_ == ProgressMode::kAuto) {
    mode_ = isatty(fileno(err)) ? ProgressMode::kLive : ProgressMode::kOff;
  }
  extend(plan);
}

void Progress::extend(const core::Plan& plan) {
  for (const auto& s : plan.collectiveSteps) {
    if (steps_.contains(s.index)) continue;
    const core::OpTraits& op = core::traits(s.op);
    const double w = s.waiver.empty()
                         ? (s.iters + s.warmup + 2) * (static_cast<double>(s.bytes) + kStepOverheadBytes)
                         : 0.0;
    steps_[s.index] = {w, fmt::format("{} {} {}{} {} {}",
                                      core::name(plan.scopes[static_cast<std::size_t>(s.scopeIndex)].scope),
                                      op.name, core::traits(s.dtype).name,
                                      op.reduces ? fmt::format(" {}", core::name(s.redop)) : "",
                                      core::formatBytes(s.bytes), s.inPlace ? "in-place" : "out-of-place")};
    totalWeight_ += w;
  }
  for (const auto& s : plan.scalingSteps) {
    if (steps_.contains(s.index)) continue;
    const double w = (s.iters + s.warmup + 2) * (static_cast<double>(s.bytes) + kStepOverheadBytes);
    steps_[s.index] = {w, fmt::format("scaling all_reduce {} on {} {}", core::formatBytes(s.bytes), s.n,
                                      core::name(s.level))};
    totalWeight_ += w;
  }
  for (const auto& s : plan.trainingSteps) {
    if (steps_.contains(s.index)) continue;
    const double w = (s.iters + s.warmup) * (static_cast<double>(s.bytes) + kStepOverheadBytes);
    const std::string what = s.traffic < 0 ? std::string("all traffic at once")
                                           : std::string(core::name(plan.traffic[static_cast<std::size_t>(s.traffic)].kind)) + " alone";
    steps_[s.index] = {w, fmt::format("training {} ({})", what, core::formatLayout(plan.layout))};
    totalWeight_ += w;
  }
  for (const auto& s : plan.copySteps) {
    if (steps_.contains(s.index)) continue;
    // per method: write and read, each a -> b, b -> a and both ways at once
    const double w = 8.0 * (s.iters + s.warmup) * (static_cast<double>(s.bytes) + kStepOverheadBytes);
    steps_[s.index] = {w, fmt::format("copies local ranks {}-{} ({})", s.a, s.b, core::formatBytes(s.bytes))};
    totalWeight_ += w;
  }
  for (const auto& s : plan.pairSteps) {
    if (steps_.contains(s.index)) continue;
    const std::size_t pairs = core::pairsOf(s).size();
    // one way, the other, both: windows of messages, one way acknowledged; then the ping-pong
    // (osu_latency's 100 untimed round trips first)
    const double w = 3.0 * (s.iters + s.warmup) * (s.window * static_cast<double>(s.bytes) + kRoundTripBytes) +
                     (s.latencyIters + 100) * kRoundTripBytes + kStepOverheadBytes;
    const std::string what = s.sample > 0      ? fmt::format("retest {}", s.sample)
                             : s.pairs.empty() ? fmt::format("round {}/{}", s.round + 1, core::circleRounds(s.members))
                                               : std::string("quick round");
    steps_[s.index] = {w, fmt::format("pairwise {} {} ({} pairs, {})", core::name(s.level), what, pairs,
                                      core::formatBytes(s.bytes))};
    totalWeight_ += w;
  }
  total_ = plan.stepCount();
}

std::string Progress::describe(int step) const {
  const auto it = steps_.find(step);
  return it != steps_.end() ? it->second.second : std::string();
}

double Progress::etaSeconds() const {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (doneWeight_ <= 0) return -1;
  return elapsed * (totalWeight_ - doneWeight_) / doneWeight_;
}

void Progress::starting(int step) {
  if (mode_ == ProgressMode::kOff) return;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double eta = etaSeconds();
  const auto it = steps_.find(step);
  const std::string text = fmt::format("[{:>{}}/{}] {}  {} elapsed{}", step + 1,
                                       fmt::format("{}", total_).size(), total_,
                                       it != steps_.end() ? it->second.second : "", duration(elapsed),
                                       eta >= 0 ? ", ETA " + duration(eta) : "");
  if (mode_ == ProgressMode::kLive) {
    fmt::print(err_, "\r\033[K{}", text);
    lineOpen_ = true;
  } else {
    fmt::print(err_, "{}\n", text);
  }
  std::fflush(err_);
}

void Progress::clear() {
  if (mode_ == ProgressMode::kLive && lineOpen_) {
    fmt::print(err_, "\r\033[K");
    std::fflush(err_);
    lineOpen_ = false;
  }
}

void Progress::finished(int step) {
  if (const auto it = steps_.find(step); it != steps_.end()) doneWeight_ += it->second.first;
}

void Progress::recorded(int step) {
  if (const auto it = steps_.find(step); it != steps_.end()) {
    totalWeight_ -= it->second.first;
    it->second.first = 0;
  }
}

void Progress::end() { clear(); }

}  // namespace fabricmap::orchestrator
