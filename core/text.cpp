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

}  // namespace fabricmap::core
