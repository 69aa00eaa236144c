// Progress output (see progress.h).
#include "orchestrator/progress.h"

#include <unistd.h>

#include <fmt/format.h>

#include "core/units.h"

namespace fabricmap::orchestrator {
namespace {

std::string describe(const core::Plan& plan, const core::CollectiveStep& s) {
  const core::OpTraits& op = core::traits(s.op);
  return fmt::format("{} {} {}{} {} {}", core::name(plan.scopes[static_cast<std::size_t>(s.scopeIndex)].scope),
                     op.name, core::traits(s.dtype).name,
                     op.reduces ? fmt::format(" {}", core::name(s.redop)) : "",
                     core::formatBytes(s.bytes), s.inPlace ? "in-place" : "out-of-place");
}

std::string duration(double seconds) {
  if (seconds < 60) return fmt::format("{:.0f}s", seconds);
  return fmt::format("{}m{:02}s", static_cast<int>(seconds) / 60, static_cast<int>(seconds) % 60);
}

}  // namespace

Progress::Progress(ProgressMode mode, std::FILE* err, const core::Plan& plan)
    : mode_(mode), err_(err), plan_(plan), start_(std::chrono::steady_clock::now()) {
  if (mode_ == ProgressMode::kAuto) {
    mode_ = isatty(fileno(err)) ? ProgressMode::kLive : ProgressMode::kOff;
  }
  // A step costs a fixed overhead plus time proportional to the bytes it moves.
  for (const auto& s : plan.steps) {
    const double w = s.waiver.empty()
                         ? (s.iters + s.warmup + 2) * (static_cast<double>(s.bytes) + 256.0 * 1024)
                         : 0.0;
    weight_.push_back(w);
    totalWeight_ += w;
  }
}

double Progress::etaSeconds() const {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (doneWeight_ <= 0) return -1;
  return elapsed * (totalWeight_ - doneWeight_) / doneWeight_;
}

void Progress::starting(const core::CollectiveStep& step) {
  if (mode_ == ProgressMode::kOff) return;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double eta = etaSeconds();
  const std::string text = fmt::format("[{:>{}}/{}] {}  {} elapsed{}", step.index + 1,
                                       fmt::format("{}", plan_.steps.size()).size(),
                                       plan_.steps.size(), describe(plan_, step), duration(elapsed),
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

void Progress::finished(const core::CollectiveStep& step) {
  doneWeight_ += weight_[static_cast<std::size_t>(step.index)];
}

void Progress::end() { clear(); }

}  // namespace fabricmap::orchestrator
