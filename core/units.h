// Sizes and rates as nccl-tests prints them: K/M/G suffixes are powers of 1024, GB/s is 1e9 B/s.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fabricmap::core {

// "32M" -> 33554432. Accepts an optional B/iB after the suffix ("1KiB", "64kb"). Throws
// UsageError naming `what` on anything else.
std::uint64_t parseBytes(std::string_view text, std::string_view what);

// In the largest unit the value reaches: 33554432 -> "32 MiB", 1000 -> "1000 B",
// 1536 -> "1.5 KiB" (one decimal when not whole).
std::string formatBytes(std::uint64_t bytes);

// The sweep nccl-tests runs: min, min*factor, ... <= max, or min, min+step, ... <= max when
// stepBytes > 0. Arguments are validated by the caller.
std::vector<std::uint64_t> sweepSizes(std::uint64_t minBytes, std::uint64_t maxBytes,
                                      std::uint64_t factor, std::uint64_t stepBytes);

// A rate given in GB/s, in the unit that reads best: "1.93 GB/s", "24.1 MB/s", "n/a" for NaN.
std::string formatRate(double gbps);

// A count in the largest of K, M, B (billion), T it reaches, 3 significant digits: 7e9 -> "7B".
std::string formatCount(double v);

// "0-3,6,8-9": ranks compressed into ranges, for records and messages.
std::string formatRanks(std::span<const int> ranks);
// The inverse, also the kernel's cpulist ("0-47,96-143"): the values in order; nullopt for text
// that is not such a list, a value above `most`, or a range going down.
std::optional<std::vector<int>> parseRanks(std::string_view text, int most = 1 << 16);

}  // namespace fabricmap::core
