// Chooses the pattern family and precomputes the periodic expected-value tables (pattern.h).
#include "core/pattern_for.h"

#include <algorithm>

namespace fabricmap::core {

Pattern patternFor(Op op, RedOp redop, DType dtype, int nranks, std::uint32_t seed) {
  const DTypeTraits& dt = traits(dtype);
  Pattern p;
  p.nranks = nranks;
  p.isSigned = dt.isSigned;
  p.seed = seed;
  if (!traits(op).reduces) {
    p.family = PatternFamily::kMove;
    return p;
  }
  switch (redop) {
    case RedOp::kSum: {
      const double k = std::min<double>(Pattern::kMaxSumPeriod, dt.exactLimit / nranks);
      if (k < 1.0) {
        p.family = PatternFamily::kSumSparse;
        return p;
      }
      p.family = PatternFamily::kSum;
      p.k = static_cast<int>(k);
      for (int phase = 0; phase < p.k; ++phase) {
        double sum = 0.0;
        for (int q = 0; q < nranks; ++q) sum += static_cast<double>((q + phase) % p.k) + 1.0;
        p.table[phase] = sum;
      }
      return p;
    }
    case RedOp::kProd:
      p.family = PatternFamily::kProd;
      return p;
    case RedOp::kMin:
    case RedOp::kMax: {
      p.family = PatternFamily::kMinMax;
      p.isMax = redop == RedOp::kMax;
      const int distinct = std::min(nranks, Pattern::kMinMaxPeriod);  // 7 is a unit mod 31
      for (int phase = 0; phase < Pattern::kMinMaxPeriod; ++phase) {
        double best = p.isMax ? -1e300 : 1e300;
        for (int q = 0; q < distinct; ++q) {
          double v = static_cast<double>((7 * q + phase) % Pattern::kMinMaxPeriod);
          v += p.isSigned ? -15.0 : 1.0;
          best = p.isMax ? std::max(best, v) : std::min(best, v);
        }
        p.table[phase] = best;
      }
      return p;
    }
  }
  return p;
}

}  // namespace fabricmap::core

