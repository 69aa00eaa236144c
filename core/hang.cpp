// The hang verdict (see hang.h).
#include "core/hang.h"

#include <algorithm>

namespace fabricmap::core {

std::string_view name(StepPhase phase) {
  switch (phase) {
    case StepPhase::kStarting: return "starting";
    case StepPhase::kMeasuring: return "measuring";
    case StepPhase::kDone: return "done";
  }
  return "?";
}

HangVerdict judgeHang(int step, const std::vector<RankProgress>& ranks, double silentAfter) {
  HangVerdict v;
  std::vector<int> unfinished;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const RankProgress& p = ranks[r];
    if (p.step < step || (p.step == step && p.phase != StepPhase::kDone)) unfinished.push_back(static_cast<int>(r));
  }
  const auto pick = [&](const std::vector<int>& among, auto&& test) {
    std::vector<int> out;
    for (int r : among) {
      if (test(ranks[static_cast<std::size_t>(r)])) out.push_back(r);
    }
    return out;
  };
  // silence counts whatever a rank said last: its own thread speaks every half second, so a rank
  // that finished its part and then went quiet (stopped, gone) holds up the gathering
  std::vector<int> all(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) all[r] = static_cast<int>(r);
  v.culprits = pick(all, [&](const RankProgress& p) { return p.silentSeconds > silentAfter; });
  v.why = "stopped responding";
  if (v.culprits.empty()) {
    v.culprits = pick(unfinished,
                      [&](const RankProgress& p) { return p.step < step || p.phase == StepPhase::kStarting; });
    v.why = "never reached the measurement";
  }
  if (v.culprits.empty()) {
    v.culprits = unfinished;
    v.why = unfinished.empty() ? "every rank finished its part; the step is stuck gathering its results"
                               : "stuck inside the measurement";
  }
  for (int r : unfinished) {
    if (std::find(v.culprits.begin(), v.culprits.end(), r) == v.culprits.end()) v.waiting.push_back(r);
  }
  return v;
}

}  // namespace fabricmap::core
