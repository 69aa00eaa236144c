// Text from files fabricmap did not write (see text.h).
#include "core/text.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "core/error.h"

namespace fabricmap::core {

std::string printable(std::string_view text, std::size_t limit) {
  std::string out;
  for (const char ch : text.substr(0, limit)) {
    const auto c = static_cast<unsigned char>(ch);
    out += c >= 0x20 && c < 0x7f ? std::string(1, ch) : fmt::format("\\x{:02x}", c);
  }
  if (text.size() > limit) out += "...";
  return out;
}

std::string readUserFile(const std::string& path, std::string_view what, std::size_t limit) {
  constexpr std::size_t kShownPath = 256;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw UsageError(fmt::format("{} '{}' is a directory", what, printable(path, kShownPath)));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw UsageError(fmt::format("cannot read {} '{}': {}", what, printable(path, kShownPath), std::strerror(errno)));
  }
  std::string text;
  std::string buffer(std::size_t{65536}, '\0');
  while (text.size() <= limit && (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0)) {
    text.append(buffer.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) throw UsageError(fmt::format("cannot read {} '{}'", what, printable(path, kShownPath)));
  if (text.size() > limit + 1) text.resize(limit + 1);
  return text;
}

}  // namespace fabricmap::core
