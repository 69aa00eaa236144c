// Element type and reduction operator tables.
#include "core/dtype.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

namespace fabricmap::core {
namespace {

constexpr double kTwo24 = 16777216.0;
constexpr double kTwo53 = 9007199254740992.0;

constexpr std::array<DTypeTraits, 10> kDTypes{{
    {DType::kInt8, "int8", 1, false, true, 127.0},
    {DType::kUint8, "uint8", 1, false, false, 255.0},
    {DType::kInt32, "int32", 4, false, true, 2147483647.0},
    {DType::kUint32, "uint32", 4, false, false, 4294967295.0},
    {DType::kInt64, "int64", 8, false, true, kTwo53},  // patterns are computed in double
    {DType::kUint64, "uint64", 8, false, false, kTwo53},
    {DType::kHalf, "half", 2, true, true, 2048.0},
    {DType::kFloat, "float", 4, true, true, kTwo24},
    {DType::kDouble, "double", 8, true, true, kTwo53},
    {DType::kBfloat16, "bfloat16", 2, true, true, 256.0},
}};

struct Alias {
  std::string_view alias;
  DType type;
};
constexpr std::array<Alias, 13> kDTypeAliases{{
    {"char", DType::kInt8},     {"int", DType::kInt32},     {"uint", DType::kUint32},
    {"fp16", DType::kHalf},     {"f16", DType::kHalf},      {"float16", DType::kHalf},
    {"fp32", DType::kFloat},    {"f32", DType::kFloat},     {"float32", DType::kFloat},
    {"fp64", DType::kDouble},   {"f64", DType::kDouble},    {"float64", DType::kDouble},
    {"bf16", DType::kBfloat16},
}};

constexpr std::array<RedOp, 4> kRedOps{RedOp::kSum, RedOp::kProd, RedOp::kMin, RedOp::kMax};
constexpr std::array<std::string_view, 4> kRedOpNames{"sum", "prod", "min", "max"};

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

const DTypeTraits& traits(DType type) { return kDTypes[static_cast<std::size_t>(type)]; }

std::span<const DTypeTraits> allDTypes() { return kDTypes; }

std::optional<DType> parseDType(std::string_view name) {
  const std::string key = lower(name);
  for (const auto& t : kDTypes) {
    if (t.name == key) return t.type;
  }
  for (const auto& a : kDTypeAliases) {
    if (a.alias == key) return a.type;
  }
  return std::nullopt;
}

std::string_view name(RedOp op) { return kRedOpNames[static_cast<std::size_t>(op)]; }

std::span<const RedOp> allRedOps() { return kRedOps; }

std::optional<RedOp> parseRedOp(std::string_view name) {
  const std::string key = lower(name);
  for (std::size_t i = 0; i < kRedOps.size(); ++i) {
    if (kRedOpNames[i] == key) return kRedOps[i];
  }
  return std::nullopt;
}

}  // namespace fabricmap::core
