// Host fill and check loops, one instantiation per element type (see host_check.h).
#include "worker/host_check.h"

#include <cstdint>

#include "core/error.h"

namespace fabricmap::worker {
namespace {

template <class F>
void withHostType(core::DType dtype, F&& f) {
  using core::DType;
  switch (dtype) {
    case DType::kInt8: return f(std::int8_t{});
    case DType::kUint8: return f(std::uint8_t{});
    case DType::kInt32: return f(std::int32_t{});
    case DType::kUint32: return f(std::uint32_t{});
    case DType::kInt64: return f(std::int64_t{});
    case DType::kUint64: return f(std::uint64_t{});
    case DType::kFloat: return f(float{});
    case DType::kDouble: return f(double{});
    case DType::kHalf:
    case DType::kBfloat16: break;
  }
  throw FM_FAULT("element type " + std::string(core::traits(dtype).name) +
                 " has no host representation");
}

}  // namespace

bool hostSupports(core::DType dtype) {
  return dtype != core::DType::kHalf && dtype != core::DType::kBfloat16;
}

void fillInput(core::DType dtype, void* buffer, std::uint64_t elems, const core::Pattern& pattern,
               int rank) {
  withHostType(dtype, [&](auto zero) {
    using T = decltype(zero);
    T* p = static_cast<T*>(buffer);
    for (std::uint64_t i = 0; i < elems; ++i) p[i] = static_cast<T>(pattern.input(rank, i));
  });
}

void fillValue(core::DType dtype, void* buffer, std::uint64_t elems, double value) {
  withHostType(dtype, [&](auto zero) {
    using T = decltype(zero);
    T* p = static_cast<T*>(buffer);
    const T v = static_cast<T>(value);
    for (std::uint64_t i = 0; i < elems; ++i) p[i] = v;
  });
}

std::uint64_t countWrong(core::DType dtype, const void* output, std::uint64_t elems,
                         const OutputCheck& check) {
  std::uint64_t wrong = 0;
  withHostType(dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* p = static_cast<const T*>(output);
    const core::SourceRule rule = check.op->source;
    for (std::uint64_t j = 0; j < elems; ++j) {
      const core::OutputSource src = core::sourceOf(rule, check.rank, check.nranks, check.root, check.block, j);
      const double expected = src.reduced ? check.pattern->reduced(src.index)
                                          : check.pattern->input(src.rank, src.index);
      if (p[j] != static_cast<T>(expected)) ++wrong;
    }
  });
  return wrong;
}

void corruptElement(core::DType dtype, void* buffer, std::uint64_t element,
                    const core::Pattern& pattern) {
  fillValue(dtype, static_cast<std::byte*>(buffer) + element * core::traits(dtype).size, 1,
            pattern.poison());
}

}  // namespace fabricmap::worker
