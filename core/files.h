// The one way fabricmap opens what a user names. An input is a regular file (or, for the text
// inputs that document it, a shell pipe such as `<(nvidia-smi topo -m)`), read within a bound on
// its size and on the time it may stay silent: a FIFO nobody writes, a device or a socket never
// hangs a command. An output is a regular file or absent, never one of the same command's
// inputs, replaced only when the user asked (--force, or --resume on its own file), and locked
// while it is written, so a second writer is refused with the name of the first.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace fabricmap::core {

// How long a pipe may stay silent before its reader gives up: long enough for a slow
// `nvidia-smi topo -m` behind `<(...)`, short enough that a pipe nobody writes ends the command.
inline constexpr std::chrono::seconds kPipeSilence{60};

// Throws UsageError unless `path` (symbolic links followed) is a regular file: "no such WHAT 'PATH'",
// "WHAT 'PATH' is a directory", "WHAT 'PATH' is a FIFO, not a regular file", a device, a socket.
void requireRegularFile(const std::string& path, std::string_view what);

// Throws UsageError unless `path` is a directory (a mistyped --sysfs-root).
void requireDirectory(const std::string& path, std::string_view what);

// The contents of a text file the user named (a topology, fabric, profile, baseline, providers
// file or a log; `what` names it in messages), at most `limit` + 1 bytes: the caller's parser
// refuses a longer text by its size without reading it all. A regular file, or a pipe a shell
// made (`<(command)`, a pipe on standard input), which may stay silent at most kPipeSilence;
// anything else (a named FIFO, a device, a directory) is a UsageError that says what it is.
std::string readUserFile(const std::string& path, std::string_view what, std::size_t limit);

// The bounded read readUserFile makes: at most `limit` + 1 bytes of `fd` until its end; a
// UsageError naming `what` and `path` when no byte arrives for `silence`.
std::string readBounded(int fd, std::string_view what, const std::string& path, std::size_t limit,
                        std::chrono::milliseconds silence);

// What a command is about to write, and what it was asked.
struct OutputRules {
  std::string_view what = "output";         // "results file", "report", "baseline" in messages
  bool replace = false;                     // --force given, or --resume finishing this file
  std::string howToReplace = "pass --force to replace it";
  std::vector<std::string> inputs = {};     // the files the same command reads
  bool createParents = false;               // a default path's folder is made; a named one must exist
};

// Throws UsageError unless `path` may be written under `rules`: not empty, its folder exists (or
// is made), it is absent or a regular file, not one of `rules.inputs`, replaced only when
// `rules.replace`. Writers build PATH.new and rename it over PATH; nothing is written here.
void checkOutput(const std::string& path, const OutputRules& rules);

// Writes `text` to PATH.new and renames it over `path` (checked by checkOutput first), so a full
// disk never leaves half a file where the last good one was. Throws UsageError with the reason.
void writeReplacing(const std::string& path, std::string_view text);

// PATH.lock, held (flock) by this process while it writes PATH: a second fabricmap writing the same
// path is refused with what the lock file says of the first (process, host, since when, command).
// The lock goes with the process that holds it, so a killed writer never blocks the next one.
class OutputLock {
 public:
  OutputLock() = default;
  OutputLock(const std::string& path, std::string_view command);
  OutputLock(OutputLock&& other) noexcept;
  OutputLock& operator=(OutputLock&& other) noexcept;
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;
  ~OutputLock();

 private:
  void release() noexcept;
  std::string lockPath_;
  int fd_ = -1;
};

// checkOutput, then the output's lock: what a command calls before it reads its inputs.
OutputLock claimOutput(const std::string& path, const OutputRules& rules, std::string_view command);

// PATH -> PATH.lock
std::string lockPath(const std::string& path);

}  // namespace fabricmap::core
