// Page-aligned host memory, touched on allocation so first-use page faults stay out of timings.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

namespace fabricmap::worker {

class HostBuffer {
 public:
  static constexpr std::size_t kAlignment = 4096;

  HostBuffer() = default;

  std::byte* data() const { return data_.get(); }
  std::size_t size() const { return size_; }

  // Grows to at least `bytes` (contents are not kept); never shrinks, so a sweep allocates its
  // largest size once.
  void reserve(std::size_t bytes) {
    if (bytes <= size_) return;
    const std::size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
    data_.reset();
    void* p = std::aligned_alloc(kAlignment, rounded);
    if (p == nullptr) throw std::bad_alloc();
    std::memset(p, 0, rounded);
    data_.reset(static_cast<std::byte*>(p));
    size_ = rounded;
  }

 private:
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  std::unique_ptr<std::byte, Free> data_;
  std::size_t size_ = 0;
};

}  // namespace fabricmap::worker
