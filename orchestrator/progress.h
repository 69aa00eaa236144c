// Progress on rank 0's stderr: step i of N, what it runs, elapsed time and an ETA.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "core/plan.h"
#include "orchestrator/run_config.h"

namespace fabricmap::orchestrator {

class Progress {
 public:
  // kAuto resolves to live output when `err` is a terminal, otherwise off.
  Progress(ProgressMode mode, std::FILE* err, const core::Plan& plan);

  void starting(const core::CollectiveStep& step);  // before a step runs
  void clear();                                     // before other output reaches the terminal
  void finished(const core::CollectiveStep& step);  // after it ran
  void end();

 private:
  double etaSeconds() const;

  ProgressMode mode_;
  std::FILE* err_;
  const core::Plan& plan_;
  std::vector<double> weight_;  // expected relative cost of each step
  double totalWeight_ = 0;
  double doneWeight_ = 0;
  std::chrono::steady_clock::time_point start_;
  bool lineOpen_ = false;
};

}  // namespace fabricmap::orchestrator
