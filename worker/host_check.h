// Test data and exact checks on host memory, for backends whose buffers the CPU can read.
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "core/ops.h"
#include "core/pattern.h"

namespace fabricmap::worker {

// Writes rank `rank`'s input pattern into `elems` elements.
void fillInput(core::DType dtype, void* buffer, std::uint64_t elems, const core::Pattern& pattern,
               int rank);
// Writes `value` into `elems` elements (the poison before a check).
void fillValue(core::DType dtype, void* buffer, std::uint64_t elems, double value);

struct OutputCheck {
  const core::OpTraits* op;
  const core::Pattern* pattern;
  int rank;
  int nranks;
  int root;
  std::uint64_t block;
};
// Number of the `elems` output elements that differ from what the op must produce.
std::uint64_t countWrong(core::DType dtype, const void* output, std::uint64_t elems,
                         const OutputCheck& check);
// Changes element `element` to a value no correct output holds.
void corruptElement(core::DType dtype, void* buffer, std::uint64_t element,
                    const core::Pattern& pattern);

// Whether host code can represent the type (half and bfloat16 have no C++20 host type).
bool hostSupports(core::DType dtype);

}  // namespace fabricmap::worker
