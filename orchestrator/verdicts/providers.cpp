// Per-file prices and GPU memory for `compare` (providers.h).
#include "orchestrator/verdicts/providers.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <set>

#include "core/error.h"
#include "core/files.h"
#include "core/text.h"
#include "core/units.h"

namespace fabricmap::orchestrator {
namespace {

// Text from a file fabricmap did not write, safe to quote (core/text.h).
std::string shown(std::string_view text, std::size_t limit = 40) { return core::printable(text, limit); }

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::vector<std::string_view> columns(std::string_view line) {
  std::vector<std::string_view> out;
  while (!line.empty()) {
    while (!line.empty() && isSpace(line.front())) line.remove_prefix(1);
    std::size_t end = 0;
    while (end < line.size() && !isSpace(line[end])) ++end;
    if (end > 0) out.push_back(line.substr(0, end));
    line.remove_prefix(end);
  }
  return out;
}

// A non-negative finite figure no larger than `most`; "-" is unknown. `what` names it in messages.
template <class Fail>
std::optional<double> figure(std::string_view text, std::string_view what, double most, const Fail& fail) {
  if (text == "-") return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v))
    fail(fmt::format("{}: '{}' is not a number (or - for not known)", what, shown(text)));
  if (v < 0 || v > most) fail(fmt::format("{}: {} is outside 0..{}", what, shown(text), most));
  return v;
}

// A GPU's memory as `--gpu-memory` takes it (40G); "-" is unknown.
template <class Fail>
std::optional<double> memory(std::string_view text, const Fail& fail) {
  if (text == "-") return std::nullopt;
  std::uint64_t bytes = 0;
  try {
    bytes = core::parseBytes(text, "GPU memory");
  } catch (const core::UsageError&) {
    fail(fmt::format("GPU memory: '{}' is not a size such as 40G or 80GiB (or - for not known)", shown(text)));
  }
  if (bytes < kMinGpuMemoryBytes || bytes > kMaxGpuMemoryBytes)
    fail(fmt::format("GPU memory: '{}' is outside 1 GiB..64 TiB (a size needs its unit: 40G)", shown(text)));
  return static_cast<double>(bytes);
}

template <class Fail>
ProviderLine parseLine(std::string_view line, int lineNo, const Fail& fail) {
  const std::vector<std::string_view> cols = columns(line);
  if (cols.size() < 2)
    fail(fmt::format("expected a file or label, its price per GPU-hour and optionally its GPU memory, got '{}'",
                     shown(line)));
  if (cols.size() > 3)
    fail(fmt::format("{} columns; a line is FILE_OR_LABEL USD_PER_GPU_HOUR [GPU_MEMORY]", cols.size()));
  ProviderLine p;
  p.line = lineNo;
  p.subject = std::string(cols[0]);
  std::string_view price = cols[1];
  if (price.size() > 1 && price.front() == '$') price.remove_prefix(1);
  p.pricePerGpuHour = figure(price, "price per GPU-hour", kMaxPricePerGpuHour, fail);
  if (cols.size() == 3) p.gpuMemoryBytes = memory(cols[2], fail);
  return p;
}

bool hasControlCharacter(std::string_view line) {
  return std::any_of(line.begin(), line.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\r'; });
}

// The files a subject names: by label, by path as given, else by the path's file name.
std::vector<std::size_t> filesNamed(const std::vector<ComparedFile>& files, std::string_view subject) {
  std::vector<std::size_t> exact;
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (files[i].label == subject || files[i].path == subject) exact.push_back(i);
  }
  if (!exact.empty()) return exact;
  std::vector<std::size_t> byName;
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (std::filesystem::path(files[i].path).filename().string() == subject) byName.push_back(i);
  }
  return byName;
}

std::string fileList(const std::vector<ComparedFile>& files) {
  std::vector<std::string> names;
  for (const ComparedFile& f : files) names.push_back(f.label == f.path ? f.path : f.label + " (" + f.path + ")");
  return fmt::format("{}", fmt::join(names, ", "));
}

// The one file `subject` names; `where` prefixes a message ("--price a.h5=2", "providers.txt:3").
std::size_t theFile(const std::vector<ComparedFile>& files, std::string_view subject, const std::string& where) {
  const std::vector<std::size_t> named = filesNamed(files, subject);
  if (named.empty())
    throw core::UsageError(
        fmt::format("{}: '{}' is none of the compared files or labels ({})", where, shown(subject), fileList(files)));
  if (named.size() > 1)
    throw core::UsageError(fmt::format("{}: '{}' names {} of the compared files; give their --label instead", where,
                                       shown(subject), named.size()));
  return named.front();
}

}  // namespace

Providers parseProviders(std::string_view text, std::string_view fileName) {
  Providers out;
  out.path = std::string(fileName);
  if (text.size() > kMaxProvidersBytes)
    throw core::UsageError(fmt::format("{}: larger than {} KiB; a providers file is a few lines", shown(fileName, 256),
                                       kMaxProvidersBytes / 1024));
  std::set<std::string> subjects;
  int lineNo = 0;
  while (!text.empty()) {
    ++lineNo;
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    const auto fail = [&](const std::string& why) {
      throw core::UsageError(fmt::format("{}:{}: {}", shown(fileName, 256), lineNo, why));
    };
    if (line.size() > kMaxProvidersLineBytes) fail(fmt::format("line longer than {} bytes", kMaxProvidersLineBytes));
    if (const std::size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    if (hasControlCharacter(line)) fail("control character in the line");
    if (columns(line).empty()) continue;
    ProviderLine p = parseLine(line, lineNo, fail);
    if (!subjects.insert(p.subject).second) fail(fmt::format("'{}' given twice", shown(p.subject)));
    out.lines.push_back(std::move(p));
  }
  if (out.lines.empty())
    throw core::UsageError(fmt::format("{}: no line names a file and its price", shown(fileName, 256)));
  return out;
}

Providers readProvidersFile(const std::string& path) {
  return parseProviders(core::readUserFile(path, "providers file", kMaxProvidersBytes), path);
}

PriceArgument parsePriceArgument(std::string_view text) {
  const std::size_t eq = text.rfind('=');
  if (eq == std::string_view::npos || eq == 0)
    throw core::UsageError(
        fmt::format("--price '{}': expected FILE=USD (the price of one GPU-hour of that file's offer)", shown(text, 256)));
  PriceArgument p;
  p.subject = std::string(text.substr(0, eq));
  std::string_view price = text.substr(eq + 1);
  if (price.size() > 1 && price.front() == '$') price.remove_prefix(1);
  const auto fail = [&](const std::string& why) {
    throw core::UsageError(fmt::format("--price '{}': {}", shown(text, 256), why));
  };
  if (price == "-") fail("no price");
  p.pricePerGpuHour = figure(price, "price", kMaxPricePerGpuHour, fail).value_or(0);
  return p;
}

std::vector<Offer> offersFor(const std::vector<ComparedFile>& files, const Providers* providers,
                             const std::vector<PriceArgument>& prices, std::optional<double> everyFile) {
  std::vector<Offer> offers(files.size());
  if (everyFile) {
    for (Offer& o : offers) {
      o.pricePerGpuHour = everyFile;
      o.priceFrom = "--price-per-gpu-hour";
    }
  }
  if (providers != nullptr) {
    for (const ProviderLine& p : providers->lines) {
      const std::string where = fmt::format("{}:{}", shown(providers->path, 256), p.line);
      Offer& o = offers[theFile(files, p.subject, where)];
      if (p.pricePerGpuHour) {
        o.pricePerGpuHour = p.pricePerGpuHour;
        o.priceFrom = where;
      }
      if (p.gpuMemoryBytes) {
        o.gpuMemoryBytes = p.gpuMemoryBytes;
        o.memoryFrom = where;
      }
    }
  }
  std::set<std::size_t> priced;
  for (const PriceArgument& p : prices) {
    const std::string where = fmt::format("--price {}={}", shown(p.subject, 256), p.pricePerGpuHour);
    const std::size_t i = theFile(files, p.subject, where);
    if (!priced.insert(i).second) throw core::UsageError(fmt::format("{}: {} is priced twice", where, files[i].label));
    offers[i].pricePerGpuHour = p.pricePerGpuHour;
    offers[i].priceFrom = "--price";
  }
  return offers;
}

}  // namespace fabricmap::orchestrator
