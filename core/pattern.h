// Deterministic test data: what every rank puts in its input buffers and what every output element
// must then hold, exactly. Plain inline code so GPU verify kernels compute the same values.
//
// Each family keeps every partial result of a reduction an integer below the element type's exact
// limit (DTypeTraits::exactLimit), so any reduction order gives the exact expected value in every
// type, including half and bfloat16. The seed (the step index) makes a stale buffer from an
// earlier step fail the check, and `poison()` is a value no correct output holds.
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace fabricmap::core {

enum class PatternFamily : std::uint8_t {
  kMove,       // data movement: pseudo-random small integers in [-48, 48] (or [0, 96])
  kSum,        // sum: values 1..k, cycling over ranks, k chosen so n*k stays exact
  kSumSparse,  // sum when n exceeds the exact limit (bfloat16 on 512 ranks): two ranks hold 1
               // and 2, the others 0 (sum 3, which max or prod would not give)
  kProd,       // prod: two ranks hold 2..4 and 3, every other rank 1 (prod 6..12, unlike sum or max)
  kMinMax,     // min/max: ((7*rank + 3*index + seed) mod 31), shifted to [-15, 15] for signed
               // types and [1, 31] for unsigned ones (no 0, so min differs from prod)
};

struct Pattern {
  static constexpr int kMinMaxPeriod = 31;
  static constexpr int kMaxSumPeriod = 16;

  PatternFamily family = PatternFamily::kMove;
  int nranks = 1;
  int k = 1;  // kSum: cycle length
  bool isSigned = true;
  bool isMax = false;  // kMinMax: max rather than min
  std::uint32_t seed = 0;
  // Expected reduction results for kSum (period k) and kMinMax (period 31), indexed by phase.
  double table[kMinMaxPeriod] = {};

  FM_HOST_DEVICE static std::uint64_t mix(std::uint64_t x) {
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return x;
  }

  // Value of element `index` of `rank`'s input buffer.
  FM_HOST_DEVICE double input(int rank, std::uint64_t index) const {
    const std::uint64_t r = static_cast<std::uint64_t>(rank);
    const std::uint64_t n = static_cast<std::uint64_t>(nranks);
    switch (family) {
      case PatternFamily::kMove: {
        const std::uint64_t h = mix(index * 0x9E3779B97F4A7C15ull ^ (r << 32) ^ seed) % 97;
        return isSigned ? static_cast<double>(h) - 48.0 : static_cast<double>(h);
      }
      case PatternFamily::kSum:
        return static_cast<double>((r + index + seed) % static_cast<std::uint64_t>(k)) + 1.0;
      case PatternFamily::kSumSparse: {
        const std::uint64_t first = (index + seed) % n;
        return r == first ? 1.0 : (r == (first + 1) % n ? 2.0 : 0.0);
      }
      case PatternFamily::kProd: {
        const std::uint64_t first = (index + seed) % n;
        if (r == first) return 2.0 + static_cast<double>((index / n) % 3);
        return r == (first + 1) % n ? 3.0 : 1.0;
      }
      case PatternFamily::kMinMax: {
        const double v = static_cast<double>((7 * r + 3 * index + seed) % kMinMaxPeriod);
        return isSigned ? v - 15.0 : v + 1.0;
      }
    }
    return 0.0;
  }

  // Expected value of the reduction over all ranks of input element `index`.
  FM_HOST_DEVICE double reduced(std::uint64_t index) const {
    if (nranks == 1) return input(0, index);  // one rank: its own values (the sparse families name two ranks)
    switch (family) {
      case PatternFamily::kSum:
        return table[(index + seed) % static_cast<std::uint64_t>(k)];
      case PatternFamily::kSumSparse:
        return 3.0;
      case PatternFamily::kProd:
        return 3.0 * (2.0 + static_cast<double>((index / static_cast<std::uint64_t>(nranks)) % 3));
      case PatternFamily::kMinMax:
        return table[(3 * index + seed) % kMinMaxPeriod];
      case PatternFamily::kMove:
        break;
    }
    return 0.0;
  }

  // A value outside everything a correct output of this family can hold.
  FM_HOST_DEVICE double poison() const {
    return (family == PatternFamily::kMove || family == PatternFamily::kMinMax) ? 117.0 : 0.0;
  }
};

}  // namespace fabricmap::core
