// The element types and reduction operators as plain enums, with no standard-library
// dependencies, so GPU kernel sources (compiled as C++17) can name them; names and traits are in
// core/dtype.h.
#pragma once

#include <cstdint>

namespace fabricmap::core {

enum class DType : std::uint8_t {
  kInt8, kUint8, kInt32, kUint32, kInt64, kUint64, kHalf, kFloat, kDouble, kBfloat16
};

enum class RedOp : std::uint8_t { kSum, kProd, kMin, kMax };

}  // namespace fabricmap::core
