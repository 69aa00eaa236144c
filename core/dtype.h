// Element types and reduction operators, with the names nccl-tests uses on its command line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "core/types.h"

namespace fabricmap::core {

struct DTypeTraits {
  DType type;
  std::string_view name;  // nccl-tests spelling
  std::size_t size;       // bytes per element
  bool isFloat;
  bool isSigned;
  // Largest magnitude up to which every integer is exactly representable; the test patterns
  // keep every partial result of a reduction below it so results can be checked exactly.
  double exactLimit;
};

const DTypeTraits& traits(DType type);
std::span<const DTypeTraits> allDTypes();
// Accepts the nccl-tests names and common aliases (fp32, f32, float32, bf16, ...).
std::optional<DType> parseDType(std::string_view name);

std::string_view name(RedOp op);
std::span<const RedOp> allRedOps();
std::optional<RedOp> parseRedOp(std::string_view name);

}  // namespace fabricmap::core
