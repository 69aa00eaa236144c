// The storage feed's I/O (see storage.h).
#include "worker/storage.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "core/units.h"
#include "worker/clock.h"
#include "worker/host_buffer.h"

namespace fabricmap::worker {
namespace {

namespace fs = std::filesystem;
constexpr const char* kOwnDirectory = "fabricmap-storage";
constexpr std::uint64_t kMaxRandomReads = 1'000'000;
constexpr std::uint64_t kPage = 4096;  // what O_DIRECT sizes and offsets are multiples of

std::string failed(const std::string& what, const std::string& path) {
  return fmt::format("{} {}: {}", what, path, std::strerror(errno));
}

class File {
 public:
  // Opens `path` with O_DIRECT where the file system takes it. A file system that refuses it may
  // have created the file already (the check comes after the creation): the second open then
  // takes the file without O_EXCL.
  File(const std::string& path, int flags) {
    fd_ = ::open(path.c_str(), flags | O_DIRECT | O_CLOEXEC, 0644);
    direct_ = fd_ >= 0;
    if (fd_ < 0 && errno == EINVAL) fd_ = ::open(path.c_str(), (flags & ~O_EXCL) | O_CLOEXEC, 0644);
  }
  ~File() {
    if (fd_ >= 0) ::close(fd_);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  int fd() const { return fd_; }
  bool direct() const { return direct_; }

 private:
  int fd_ = -1;
  bool direct_ = false;
};

// Asks the kernel to drop `path`'s cached pages; whether fewer than a tenth stayed (mincore).
bool evicted(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  bool gone = false;
  if (::fdatasync(fd) == 0 || errno == EINVAL || errno == EBADF) {
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  }
  if (::fstat(fd, &st) == 0 && st.st_size > 0) {
    const auto size = static_cast<std::size_t>(st.st_size);
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    if (map != MAP_FAILED) {
      const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
      std::vector<unsigned char> resident((size + page - 1) / page);
      if (::mincore(map, size, resident.data()) == 0) {
        const auto kept = std::count_if(resident.begin(), resident.end(), [](unsigned char v) { return (v & 1) != 0; });
        gone = static_cast<std::size_t>(kept) * 10 < resident.size();
      }
      ::munmap(map, size);
    }
  } else {
    gone = true;  // nothing to cache
  }
  ::close(fd);
  return gone;
}

// Bytes that do not compress or deduplicate.
void fillNoise(std::byte* data, std::size_t bytes, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  for (std::size_t i = 0; i + 8 <= bytes; i += 8) {
    const std::uint64_t v = random();
    std::memcpy(data + i, &v, 8);
  }
}

StorageIo ioError(std::string why) {
  StorageIo io;
  io.error = std::move(why);
  return io;
}

std::uint64_t roundUp(std::uint64_t bytes, std::uint64_t block) { return (bytes + block - 1) / block * block; }

StorageIo writeOwn(const core::StorageStep& step, const std::string& file, int rank) {
  StorageIo io;
  std::error_code ec;
  fs::create_directories(fs::path(file).parent_path(), ec);
  if (ec) return ioError(fmt::format("cannot create {}: {}", fs::path(file).parent_path().string(), ec.message()));
  HostBuffer buffer;
  buffer.reserve(step.blockBytes);
  fillNoise(buffer.data(), step.blockBytes, static_cast<std::uint64_t>(rank) + 1);
  const File out(file, O_WRONLY | O_CREAT | O_EXCL);
  if (out.fd() < 0) return ioError(failed("cannot create", file));
  const Stopwatch clock;
  const std::uint64_t total = roundUp(step.bytes, kPage);
  while (io.bytes < total) {
    const std::size_t chunk = std::min(step.blockBytes, total - io.bytes);  // O_DIRECT: whole pages
    if (::write(out.fd(), buffer.data(), chunk) != static_cast<ssize_t>(chunk)) {
      return ioError(failed("cannot write", file));
    }
    io.bytes += chunk;
    ++io.ops;
  }
  if (::fdatasync(out.fd()) != 0) return ioError(failed("cannot sync", file));
  io.seconds = clock.seconds();
  io.cache = out.direct() ? "direct" : evicted(file) ? "dropped" : "cached";
  return io;
}

// An open file to read and what keeps the cache out of its figures.
struct Source {
  std::unique_ptr<File> file;
  std::uint64_t size = 0;
};

std::vector<Source> openAll(const std::vector<std::string>& files, std::string& cache, std::string& error) {
  std::vector<Source> sources;
  bool direct = true;
  bool dropped = true;
  for (const std::string& path : files) {
    auto file = std::make_unique<File>(path, O_RDONLY);
    if (file->fd() < 0) {
      error = failed("cannot open", path);
      return {};
    }
    if (!file->direct()) {
      direct = false;
      dropped = evicted(path) && dropped;
    }
    struct stat st {};
    ::fstat(file->fd(), &st);
    sources.push_back({std::move(file), static_cast<std::uint64_t>(st.st_size)});
  }
  cache = direct ? "direct" : dropped ? "dropped" : "cached";
  return sources;
}

StorageIo readSequential(const core::StorageStep& step, const std::vector<std::string>& files) {
  StorageIo io;
  std::vector<Source> sources = openAll(files, io.cache, io.error);
  if (!io.error.empty()) return io;
  HostBuffer buffer;
  buffer.reserve(step.blockBytes);
  const Stopwatch clock;
  for (std::size_t f = 0; f < sources.size() && io.bytes < step.bytes; ++f) {
    for (off_t at = 0; io.bytes < step.bytes; at += static_cast<off_t>(step.blockBytes)) {
      const std::size_t chunk = std::min(step.blockBytes, roundUp(step.bytes - io.bytes, kPage));
      const ssize_t n = ::pread(sources[f].file->fd(), buffer.data(), chunk, at);
      if (n < 0) return ioError(failed("cannot read", files[f]));
      if (n == 0) break;
      io.bytes += static_cast<std::uint64_t>(n);
      ++io.ops;
    }
  }
  io.seconds = clock.seconds();
  return io;
}

StorageIo readRandom(const core::StorageStep& step, const std::vector<std::string>& files, int rank) {
  StorageIo io;
  std::vector<Source> sources = openAll(files, io.cache, io.error);
  if (!io.error.empty()) return io;
  std::vector<std::uint64_t> blocksBefore;  // cumulative whole blocks, up to the bytes asked
  std::uint64_t blocks = 0;
  for (const Source& s : sources) {
    blocks += std::min(s.size, step.bytes) / step.blockBytes;
    blocksBefore.push_back(blocks);
  }
  if (blocks == 0) return ioError(fmt::format("no {} block to read at random in {}", step.blockBytes, files.front()));
  HostBuffer buffer;
  buffer.reserve(step.blockBytes);
  std::mt19937_64 random(static_cast<std::uint64_t>(rank) * 7919 + 17);
  std::uniform_int_distribution<std::uint64_t> pick(0, blocks - 1);
  const Stopwatch clock;
  while (io.ops < kMaxRandomReads && (io.ops % 64 != 0 || clock.seconds() < step.seconds)) {
    const std::uint64_t b = pick(random);
    const auto f = static_cast<std::size_t>(std::upper_bound(blocksBefore.begin(), blocksBefore.end(), b) -
                                            blocksBefore.begin());
    const std::uint64_t within = b - (f == 0 ? 0 : blocksBefore[f - 1]);
    const ssize_t n = ::pread(sources[f].file->fd(), buffer.data(), step.blockBytes,
                              static_cast<off_t>(within * step.blockBytes));
    if (n != static_cast<ssize_t>(step.blockBytes)) return ioError(failed("cannot read", files[f]));
    io.bytes += step.blockBytes;
    ++io.ops;
  }
  io.seconds = clock.seconds();
  return io;
}

// The regular files under `path`, sorted, the run's own directory left out.
std::vector<std::string> foundFiles(const std::string& path) {
  std::vector<std::string> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(path, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec) && it->path().filename() == kOwnDirectory) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(ec)) files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

std::string ownStorageFile(const std::string& path, int rank) {
  return (fs::path(path) / kOwnDirectory / fmt::format("rank-{}.dat", rank)).string();
}

std::vector<std::string> storageFilesOf(const core::StorageStep& step, int rank, int reader, int readers) {
  if (step.ownFiles) return {ownStorageFile(step.path, rank)};
  std::vector<std::string> mine;
  const std::vector<std::string> all = foundFiles(step.path);
  for (std::size_t i = static_cast<std::size_t>(reader); i < all.size(); i += static_cast<std::size_t>(readers)) {
    mine.push_back(all[i]);
  }
  return mine;
}

std::string storageProblem(const core::StorageStep& step, int rank, int reader, int readers) {
  struct stat st {};
  if (::stat(step.path.c_str(), &st) != 0) return failed("storage path", step.path);
  if (!S_ISDIR(st.st_mode)) return fmt::format("storage path {} is not a directory", step.path);
  if (!step.ownFiles) {
    if (storageFilesOf(step, rank, reader, readers).empty()) {
      return fmt::format("no file under {} for reading rank {} of {} (--storage-write writes the run's own)",
                         step.path, reader + 1, readers);
    }
    return {};
  }
  struct statvfs vfs {};
  if (::statvfs(step.path.c_str(), &vfs) != 0) return failed("cannot examine", step.path);
  if ((vfs.f_flag & ST_RDONLY) != 0) return fmt::format("storage path {} is on a read-only file system", step.path);
  if (::access(step.path.c_str(), W_OK) != 0) return failed("cannot write under", step.path);
  const std::uint64_t free = static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  const std::uint64_t needed = roundUp(step.bytes, kPage);
  if (free < needed) {
    return fmt::format("storage path {} has {} free, {} are needed for --storage-bytes", step.path,
                       core::formatBytes(free), core::formatBytes(needed));
  }
  const std::string own = ownStorageFile(step.path, rank);
  if (::access(own.c_str(), F_OK) == 0) return fmt::format("{} exists (another run's? remove it)", own);
  return {};
}

StorageIo runStorageTest(const core::StorageStep& step, const std::vector<std::string>& files, int rank) {
  switch (step.test) {
    case core::StorageTest::kWrite: return writeOwn(step, files.front(), rank);
    case core::StorageTest::kRandomRead: return readRandom(step, files, rank);
    case core::StorageTest::kRead: break;
  }
  return readSequential(step, files);
}

void removeOwnStorage(const std::string& path, int rank) {
  std::error_code ec;
  const fs::path own = ownStorageFile(path, rank);
  fs::remove(own, ec);
  fs::remove(own.parent_path(), ec);  // only when empty: other ranks' files keep it
}

}  // namespace fabricmap::worker
