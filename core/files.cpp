// Opening what the user names (see files.h).
#include "core/files.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "core/error.h"
#include "core/text.h"

namespace fabricmap::core {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kShownPath = 256;
constexpr long kPipeFsMagic = 0x50495045;  // the kernel's pipefs: pipes a shell made, not FIFOs on disk

std::string shown(const std::string& path) { return printable(path, kShownPath); }

// What a file that is not a regular file is, in words.
std::string_view kindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a file of another kind";
}

std::string notRegular(std::string_view what, const std::string& path, mode_t mode) {
  if (S_ISDIR(mode)) return fmt::format("{} '{}' is a directory", what, shown(path));
  return fmt::format("{} '{}' is {}, not a regular file", what, shown(path), kindOf(mode));
}

// An open descriptor closed on every path out.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

bool isShellPipe(int fd) {
  struct statfs fsInfo {};
  return ::fstatfs(fd, &fsInfo) == 0 && static_cast<long>(fsInfo.f_type) == kPipeFsMagic;
}

std::string utcNowText() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32] = {};
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string hostName() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

}  // namespace

void requireRegularFile(const std::string& path, std::string_view what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) throw UsageError(fmt::format("no such {}: '{}'", what, shown(path)));
    throw UsageError(fmt::format("cannot read {} '{}': {}", what, shown(path), std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) throw UsageError(notRegular(what, path, st.st_mode));
}

void requireDirectory(const std::string& path, std::string_view what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw UsageError(fmt::format("{} '{}': {}", what, shown(path), std::strerror(errno)));
  }
  if (!S_ISDIR(st.st_mode)) throw UsageError(fmt::format("{} '{}' is {}, not a directory", what, shown(path),
                                                         S_ISREG(st.st_mode) ? "a regular file" : kindOf(st.st_mode)));
}

std::string readBounded(int fd, std::string_view what, const std::string& path, std::size_t limit,
                        std::chrono::milliseconds silence) {
  std::string text;
  std::string buffer(std::size_t{65536}, '\0');
  while (text.size() <= limit) {
    pollfd ready{fd, POLLIN, 0};
    const int r = ::poll(&ready, 1, static_cast<int>(silence.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) {
      throw UsageError(fmt::format("{} '{}' sent nothing for {} s (a pipe nobody writes?)", what, shown(path),
                                   std::chrono::duration_cast<std::chrono::seconds>(silence).count()));
    }
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw UsageError(fmt::format("cannot read {} '{}': {}", what, shown(path), std::strerror(errno)));
    }
    text.append(buffer.data(), static_cast<std::size_t>(n));
  }
  if (text.size() > limit + 1) text.resize(limit + 1);
  return text;
}

std::string readUserFile(const std::string& path, std::string_view what, std::size_t limit) {
  // opened without waiting (a FIFO's open blocks for a writer otherwise), then judged by what it is
  Fd in{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)};
  if (in.fd < 0) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) throw UsageError(notRegular(what, path, st.st_mode));
    throw UsageError(fmt::format("cannot read {} '{}': {}", what, shown(path), std::strerror(errno)));
  }
  struct stat st {};
  if (::fstat(in.fd, &st) != 0) throw UsageError(fmt::format("cannot read {} '{}': {}", what, shown(path), std::strerror(errno)));
  const bool shellPipe = S_ISFIFO(st.st_mode) && isShellPipe(in.fd);
  if (!S_ISREG(st.st_mode) && !shellPipe) {
    std::string message = notRegular(what, path, st.st_mode);
    if (S_ISFIFO(st.st_mode)) message += " (a shell pipe such as <(command) is read; a named FIFO is not)";
    throw UsageError(message);
  }
  return readBounded(in.fd, what, path, limit, kPipeSilence);
}

void checkOutput(const std::string& path, const OutputRules& rules) {
  if (path.empty()) throw UsageError(fmt::format("the {} path is empty", rules.what));
  const fs::path p(path);
  if (p.filename().empty()) throw UsageError(fmt::format("{} '{}' names a directory", rules.what, shown(path)));
  const fs::path parent = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  std::error_code ec;
  if (!fs::exists(parent, ec)) {
    if (!rules.createParents) {
      throw UsageError(fmt::format("cannot write {} '{}': directory '{}' does not exist", rules.what, shown(path),
                                   shown(parent.string())));
    }
    fs::create_directories(parent, ec);
    if (ec) throw UsageError(fmt::format("cannot create directory '{}' for the {}: {}", shown(parent.string()), rules.what, ec.message()));
  } else if (!fs::is_directory(parent, ec)) {
    throw UsageError(fmt::format("cannot write {} '{}': '{}' is not a directory", rules.what, shown(path), shown(parent.string())));
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) throw UsageError(notRegular(rules.what, path, st.st_mode) + ": fabricmap writes only regular files");
    for (const std::string& input : rules.inputs) {
      if (fs::equivalent(path, input, ec)) {
        throw UsageError(fmt::format("{} '{}' is also this command's input: write it elsewhere", rules.what, shown(path)));
      }
    }
    if (!rules.replace) throw UsageError(fmt::format("{} '{}' exists: {}", rules.what, shown(path), rules.howToReplace));
  }
  // tried, not kept: the writer renames PATH.new over PATH, so the folder must take new files
  const std::string probe = path + ".new";
  Fd test{::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)};
  if (test.fd < 0 && errno != EEXIST) {
    throw UsageError(fmt::format("cannot write {} '{}': {}", rules.what, shown(path), std::strerror(errno)));
  }
  if (test.fd >= 0) ::unlink(probe.c_str());
}

void writeReplacing(const std::string& path, std::string_view text) {
  const std::string partial = path + ".new";
  auto fail = [&](const std::string& why) {
    ::unlink(partial.c_str());
    return UsageError(fmt::format("cannot write '{}': {}", shown(path), why));
  };
  {
    // made new: whatever stood at the partial name (a FIFO would block the open) is replaced
    ::unlink(partial.c_str());
    Fd out{::open(partial.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)};
    if (out.fd < 0) throw UsageError(fmt::format("cannot write '{}': {}", shown(partial), std::strerror(errno)));
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(out.fd, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw fail(std::strerror(n < 0 ? errno : ENOSPC));
      done += static_cast<std::size_t>(n);
    }
    if (::fsync(out.fd) != 0) throw fail(std::strerror(errno));
  }
  if (::rename(partial.c_str(), path.c_str()) != 0) throw fail(std::strerror(errno));
}

std::string lockPath(const std::string& path) { return path + ".lock"; }

OutputLock claimOutput(const std::string& path, const OutputRules& rules, std::string_view command) {
  checkOutput(path, rules);
  return OutputLock(path, command);
}

OutputLock::OutputLock(const std::string& path, std::string_view command) : lockPath_(lockPath(path)) {
  // the holder unlinks the lock file before it lets go: a lock taken on a file no longer at the
  // path is stale, and taken again on the new one
  for (int attempt = 0; attempt < 8; ++attempt) {
    Fd lock{::open(lockPath_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644)};
    if (lock.fd < 0) throw UsageError(fmt::format("cannot lock '{}': {}", shown(path), std::strerror(errno)));
    struct stat mine {};
    if (::fstat(lock.fd, &mine) != 0 || !S_ISREG(mine.st_mode)) {
      throw UsageError(notRegular("lock file", lockPath_, mine.st_mode));
    }
    if (::flock(lock.fd, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK) throw UsageError(fmt::format("cannot lock '{}': {}", shown(path), std::strerror(errno)));
      std::string holder(std::size_t{512}, '\0');
      const ssize_t n = ::pread(lock.fd, holder.data(), holder.size(), 0);
      holder.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
      while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\0')) holder.pop_back();
      throw UsageError(fmt::format("'{}' is being written by another fabricmap ({}); wait for it to end or write elsewhere",
                                   shown(path), holder.empty() ? "it has not said who it is yet" : printable(holder, 400)));
    }
    struct stat now {};
    if (::stat(lockPath_.c_str(), &now) != 0 || now.st_ino != mine.st_ino || now.st_dev != mine.st_dev) continue;
    const std::string who = fmt::format("{} by pid {} on {} since {}", command, ::getpid(), hostName(), utcNowText());
    if (::ftruncate(lock.fd, 0) != 0 || ::pwrite(lock.fd, who.data(), who.size(), 0) < 0) {
      // the lock holds without its words; the next writer is told the holder is silent
    }
    fd_ = std::exchange(lock.fd, -1);
    return;
  }
  throw UsageError(fmt::format("cannot lock '{}': its lock file keeps changing", shown(path)));
}

OutputLock::OutputLock(OutputLock&& other) noexcept
    : lockPath_(std::move(other.lockPath_)), fd_(std::exchange(other.fd_, -1)) {}

OutputLock& OutputLock::operator=(OutputLock&& other) noexcept {
  if (this != &other) {
    release();
    lockPath_ = std::move(other.lockPath_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

OutputLock::~OutputLock() { release(); }

void OutputLock::release() noexcept {
  if (fd_ < 0) return;
  ::unlink(lockPath_.c_str());  // before the lock goes: see the constructor
  ::close(fd_);
  fd_ = -1;
}

}  // namespace fabricmap::core
