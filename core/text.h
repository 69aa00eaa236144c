// Text from files fabricmap did not write, made safe to quote in a message.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace fabricmap::core {

// `text` safe to print: non-printable bytes as \xNN, at most `limit` characters, "..." when cut.
std::string printable(std::string_view text, std::size_t limit);

// The contents of a file the user named (a topology, fabric or profile file; `what` says which in
// messages), at most `limit` + 1 bytes: the caller's parser refuses a longer text by its size
// without reading it all. A directory or a file that cannot be opened or read is a
// core::UsageError: "WHAT 'PATH' is a directory", "cannot read WHAT 'PATH': REASON". Pipes and
// process substitutions (`--file <(nvidia-smi topo -m)`) are read like files.
std::string readUserFile(const std::string& path, std::string_view what, std::size_t limit);

}  // namespace fabricmap::core
