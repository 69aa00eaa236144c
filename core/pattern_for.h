// Builds the test pattern for one op, type, reduction and group size (host side).
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "core/ops.h"
#include "core/pattern.h"

namespace fabricmap::core {

Pattern patternFor(Op op, RedOp redop, DType dtype, int nranks, std::uint32_t seed);

}  // namespace fabricmap::core
