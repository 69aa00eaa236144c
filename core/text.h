// Text from files fabricmap did not write, made safe to quote in a message.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace fabricmap::core {

// `text` safe to print: non-printable bytes as \xNN, at most `limit` characters, "..." when cut.
std::string printable(std::string_view text, std::size_t limit);

// `text` with every word (a run without spaces or newlines) longer than `limit` cut to it and
// "..." after: a message never echoes a megabyte argument whole.
std::string shortenWords(std::string_view text, std::size_t limit);

}  // namespace fabricmap::core
