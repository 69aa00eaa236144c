// What the fuzz targets share: a hostile input as a file on disk, for readers that take a path.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace fabricmap::fuzz {

// A private directory for this process's files (in /dev/shm when there is one: no disk I/O).
inline std::string scratch(const std::string& name) {
  static const std::string dir = [] {
    std::string base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    std::string d = base + "/fabricmap-fuzz-" + std::to_string(getpid());
    mkdir(d.c_str(), 0700);
    return d;
  }();
  return dir + "/" + name;
}

// Writes `data` to `path`, replacing it.
inline void writeFile(const std::string& path, const std::uint8_t* data, std::size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
}

// Where printed output goes: read by nobody, but every byte is formatted.
inline std::FILE* sink() {
  static std::FILE* null = std::fopen("/dev/null", "w");
  return null;
}

}  // namespace fabricmap::fuzz
