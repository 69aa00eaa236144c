// Size parsing, formatting and sweep expansion.
#include "core/units.h"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/error.h"

namespace fabricmap::core {

std::uint64_t parseBytes(std::string_view text, std::string_view what) {
  const auto bad = [&](std::string_view why) {
    return UsageError(fmt::format("invalid {} '{}': {}", what, text, why));
  };
  std::uint64_t value = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec == std::errc::result_out_of_range) throw bad("too large");
  if (ec != std::errc() || ptr == begin) throw bad("expected a byte count such as 8, 64K, 32M or 1G");
  std::string_view rest(ptr, static_cast<std::size_t>(end - ptr));
  unsigned shift = 0;
  if (!rest.empty()) {
    constexpr std::string_view kSuffixes = "KMGT";
    const auto pos = kSuffixes.find(static_cast<char>(std::toupper(static_cast<unsigned char>(rest.front()))));
    if (pos != std::string_view::npos) {
      shift = 10 * static_cast<unsigned>(pos + 1);
      rest.remove_prefix(1);
      if (!rest.empty() && rest.front() == 'i') rest.remove_prefix(1);
    }
    if (rest == "B" || rest == "b") rest = {};
    if (!rest.empty()) throw bad("unknown suffix (use K, M, G or T: powers of 1024)");
  }
  if (shift != 0 && value > (std::numeric_limits<std::uint64_t>::max() >> shift)) {
    throw bad("too large");
  }
  return value << shift;
}

std::string formatBytes(std::uint64_t bytes) {
  static constexpr std::array<const char*, 5> kUnits{"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t unit = 0;
  while (unit + 1 < kUnits.size() && bytes >> (10 * (unit + 1)) != 0) ++unit;
  const std::uint64_t scale = std::uint64_t{1} << (10 * unit);
  if (bytes % scale == 0) return fmt::format("{} {}", bytes / scale, kUnits[unit]);
  return fmt::format("{:.1f} {}", static_cast<double>(bytes) / static_cast<double>(scale), kUnits[unit]);
}

std::vector<std::uint64_t> sweepSizes(std::uint64_t minBytes, std::uint64_t maxBytes,
                                      std::uint64_t factor, std::uint64_t stepBytes) {
  std::vector<std::uint64_t> sizes;
  std::uint64_t s = minBytes;
  while (s <= maxBytes) {
    sizes.push_back(s);
    const std::uint64_t next = stepBytes > 0 ? s + stepBytes : s * factor;
    if (next <= s) break;  // overflow or a degenerate step
    s = next;
  }
  return sizes;
}

std::string formatRanks(std::span<const int> ranks) {
  std::string out;
  std::size_t i = 0;
  while (i < ranks.size()) {
    std::size_t j = i;
    // (a hostile file's INT_MAX has no next rank)
    while (j + 1 < ranks.size() && ranks[j] < std::numeric_limits<int>::max() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ',';
    if (j == i) {
      out += fmt::format("{}", ranks[i]);
    } else {
      out += fmt::format("{}-{}", ranks[i], ranks[j]);
    }
    i = j + 1;
  }
  return out;
}

std::optional<std::vector<int>> parseRanks(std::string_view text, int most) {
  std::vector<int> out;
  const auto number = [&](std::string_view t) -> std::optional<int> {
    int v = 0;
    const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || ptr != t.data() + t.size() || v < 0 || v > most) return std::nullopt;
    return v;
  };
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const std::size_t dash = item.find('-');
    const auto first = number(item.substr(0, dash));
    const auto last = dash == std::string_view::npos ? first : number(item.substr(dash + 1));
    if (!first || !last || *last < *first || out.size() + static_cast<std::size_t>(*last - *first) > static_cast<std::size_t>(most)) {
      return std::nullopt;
    }
    for (int v = *first; v <= *last; ++v) out.push_back(v);
    if (comma != std::string_view::npos && text.empty()) return std::nullopt;  // a trailing comma
  }
  return out;
}

std::string formatCount(double v) {
  const double a = std::fabs(v);
  if (a >= 1e12) return fmt::format("{:.3g}T", v / 1e12);
  if (a >= 1e9) return fmt::format("{:.3g}B", v / 1e9);
  if (a >= 1e6) return fmt::format("{:.3g}M", v / 1e6);
  if (a >= 1e3) return fmt::format("{:.3g}K", v / 1e3);
  return fmt::format("{:.3g}", v);
}

std::string formatRate(double gbps) {
  if (!std::isfinite(gbps)) return "n/a";
  if (gbps >= 1.0) return fmt::format("{:.2f} GB/s", gbps);
  if (gbps >= 1e-3) return fmt::format("{:.1f} MB/s", gbps * 1e3);
  return fmt::format("{:.1f} kB/s", gbps * 1e6);
}

}  // namespace fabricmap::core
