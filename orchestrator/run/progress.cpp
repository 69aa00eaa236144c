// Progress output (see progress.h).
#include "orchestrator/run/progress.h"

#include <unistd.h>

#include <fmt/format.h>

#include "orchestrator/run/planner.h"

namespace fabricmap::orchestrator {
namespace {

std::string duration(double seconds) {
  if (seconds < 60) return fmt::format("{:.0f}s", seconds);
  return fmt::format("{}m{:02}s", static_cast<int>(seconds) / 60, static_cast<int>(seconds) % 60);
}

// A step costs a fixed overhead plus time proportional to the bytes it moves (planner's stepBytes).
constexpr double kStepOverheadBytes = 256.0 * 1024;

}  // namespace

Progress::Progress(ProgressMode mode, std::FILE* err, const core::Plan& plan)
    : mode_(mode), err_(err), start_(std::chrono::steady_clock::now()) {
  if (mode_ == ProgressMode::kAuto) {
    mode_ = isatty(fileno(err)) ? ProgressMode::kLive : ProgressMode::kOff;
  }
  extend(plan);
}

void Progress::extend(const core::Plan& plan) {
  plan.forEachStepList([&](const auto& list) {
    for (const auto& s : list) {
      if (steps_.contains(s.index)) continue;
      const double bytes = stepBytes(s);
      const double w = bytes > 0 ? bytes + kStepOverheadBytes : 0.0;
      steps_[s.index] = {w, orchestrator::describe(plan, s)};
      totalWeight_ += w;
    }
  });
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
