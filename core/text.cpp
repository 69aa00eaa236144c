// Text from files fabricmap did not write (see text.h).
#include "core/text.h"

#include <fmt/format.h>

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

std::string shortenWords(std::string_view text, std::size_t limit) {
  std::string out;
  std::size_t word = 0;
  for (const char ch : text) {
    word = ch == ' ' || ch == '\n' ? 0 : word + 1;
    if (word <= limit) out += ch;
    if (word == limit + 1) out += "...";
  }
  return out;
}

}  // namespace fabricmap::core
