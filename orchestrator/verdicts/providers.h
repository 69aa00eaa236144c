// What each compared file costs and holds (`fabricmap compare --price FILE=USD`, `--providers
// FILE`): the price of one GPU-hour, per file, for its cost row, and its GPUs' memory where the
// results file does not record it (an imported log) or the offer says otherwise. A providers file
// is simple columns, one line per results file or label (README.md, "fabricmap compare"):
//   # file or label      USD per GPU-hour   GPU memory (optional; as --gpu-memory: 40G = 40 GiB)
//   a100-8gpu            1.29               40G
// Pure code: the command reads the file (core::readUserFile) and hands the text here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabricmap::orchestrator {

inline constexpr std::size_t kMaxProvidersBytes = 64 * 1024;  // a few lines; larger is no providers file
inline constexpr std::size_t kMaxProvidersLineBytes = 1024;
inline constexpr double kMaxPricePerGpuHour = 1e6;  // USD; beyond is a typo, not an offer
// GPU memory outside this range is a missing unit (40 for 40G) or a typo, not a GPU
inline constexpr std::uint64_t kMinGpuMemoryBytes = std::uint64_t{1} << 30;
inline constexpr std::uint64_t kMaxGpuMemoryBytes = std::uint64_t{1} << 46;

struct ProviderLine {
  int line = 0;
  std::string subject;                    // a results file as given, its file name, or a --label
  std::optional<double> pricePerGpuHour;  // USD; unset: "-"
  std::optional<double> gpuMemoryBytes;   // per GPU; unset: not given or "-"
};

struct Providers {
  std::string path;
  std::vector<ProviderLine> lines;
};

// Parses a providers file's text. Every line is `SUBJECT PRICE [GPU_MEMORY]` (whitespace
// separated; PRICE in USD per GPU-hour, a leading `$` allowed; GPU_MEMORY a size as `--gpu-memory`
// takes it, 40G or 80GiB, K/M/G/T = 1024^n, 1 GiB to 64 TiB; `-` for a figure not known), `#` starts a
// comment, blank lines are ignored. Anything else (a missing or extra column, a number out of
// range or not finite, a subject given twice, a control character, a line over 1024 bytes, a file
// over 64 KiB or without a line) throws UsageError "FILE:LINE: ..." (or "FILE: ..."); never
// anything but UsageError.
Providers parseProviders(std::string_view text, std::string_view fileName);
Providers readProvidersFile(const std::string& path);

// One compared file: its path as given and its column's label.
struct ComparedFile {
  std::string path;
  std::string label;
};

// What a file costs and holds, and where each figure came from (for the reader of the memo).
struct Offer {
  std::optional<double> pricePerGpuHour;  // USD
  std::string priceFrom;                  // "--price", "providers.txt:3", "--price-per-gpu-hour"
  std::optional<double> gpuMemoryBytes;   // per GPU; unset: as the results file records it
  std::string memoryFrom;
};

// `--price FILE=USD`: the subject and the price (split at the last '='). Throws UsageError.
struct PriceArgument {
  std::string subject;
  double pricePerGpuHour = 0;
};
PriceArgument parsePriceArgument(std::string_view text);

// Each file's offer, the most specific figure first: `--price` for that file, then the providers
// file's line, then `--price-per-gpu-hour` for every file. A subject names a file by its label,
// its path as given or its path's file name. Throws UsageError for a subject that names no file or
// several ("FILE:LINE: ..." for a providers line), and for a file priced twice by `--price`.
std::vector<Offer> offersFor(const std::vector<ComparedFile>& files, const Providers* providers,
                             const std::vector<PriceArgument>& prices, std::optional<double> everyFile);

}  // namespace fabricmap::orchestrator
