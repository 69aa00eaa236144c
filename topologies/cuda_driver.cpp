// The CUDA driver's dma-buf answer (see cuda_driver.h). No cuda.h exists on the build machines: the
// few entry points and values used are declared here as NVIDIA's cuda.h defines them.
#include "topologies/cuda_driver.h"

#include <dlfcn.h>
#include <sys/utsname.h>

#include <charconv>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

namespace fabricmap::topologies {
namespace {

using CuResult = int;  // CUresult
constexpr CuResult kCudaSuccess = 0;
constexpr int kDmaBufSupported = 124;  // CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED

using InitFn = CuResult (*)(unsigned int);
using CountFn = CuResult (*)(int*);
using DeviceFn = CuResult (*)(int*, int);             // cuDeviceGet(CUdevice*, int ordinal)
using AttributeFn = CuResult (*)(int*, int, int);     // cuDeviceGetAttribute(int*, attribute, CUdevice)

template <class Fn>
Fn symbol(void* library, const char* name) {
  // POSIX guarantees a dlsym result converts to a function pointer.
  return reinterpret_cast<Fn>(dlsym(library, name));
}

}  // namespace

DmaBufSupport askCudaDriver(const std::string& library) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return {Tristate::kUnknown, fmt::format("the CUDA driver cannot be loaded ({})", why != nullptr ? why : library)};
  }
  const auto init = symbol<InitFn>(handle, "cuInit");
  const auto count = symbol<CountFn>(handle, "cuDeviceGetCount");
  const auto device = symbol<DeviceFn>(handle, "cuDeviceGet");
  const auto attribute = symbol<AttributeFn>(handle, "cuDeviceGetAttribute");
  if (!init || !count || !device || !attribute) {
    dlclose(handle);  // nothing of it ran
    return {Tristate::kUnknown, library + " is not the CUDA driver"};
  }
  if (const CuResult rc = init(0); rc != kCudaSuccess) return {Tristate::kUnknown, fmt::format("cuInit failed ({})", rc)};
  int gpus = 0;
  if (count(&gpus) != kCudaSuccess || gpus <= 0) return {Tristate::kUnknown, "the CUDA driver sees no GPU"};
  for (int g = 0; g < gpus; ++g) {
    int dev = 0;
    int value = 0;
    if (device(&dev, g) != kCudaSuccess || attribute(&value, kDmaBufSupported, dev) != kCudaSuccess) {
      return {Tristate::kUnknown, fmt::format("the CUDA driver cannot say whether GPU {} supports dma-buf", g)};
    }
    if (value == 0) return {Tristate::kNo, fmt::format("the CUDA driver reports no dma-buf support on GPU {}", g)};
  }
  return {Tristate::kYes, fmt::format("the CUDA driver reports dma-buf support on all {} GPUs", gpus)};
}

bool kernelHasRdmaDmaBuf(std::string_view release) {
  int major = 0;
  int minor = 0;
  const char* end = release.data() + release.size();
  const auto first = std::from_chars(release.data(), end, major);
  if (first.ec != std::errc() || first.ptr == end || *first.ptr != '.') return false;
  if (std::from_chars(first.ptr + 1, end, minor).ec != std::errc()) return false;
  return major > 5 || (major == 5 && minor >= 12);
}

GpuDirect withDmaBuf(const GpuDirect& sysfs, const DmaBufSupport& driver, std::string_view kernelRelease) {
  if (sysfs.ready != Tristate::kNo || driver.supported == Tristate::kUnknown) return sysfs;
  if (driver.supported == Tristate::kNo) {
    return {Tristate::kNo, fmt::format("no peer-memory module (nvidia_peermem, nv_peer_mem) loaded, and {}", driver.how)};
  }
  if (!kernelHasRdmaDmaBuf(kernelRelease)) {
    return {Tristate::kNo, fmt::format("no peer-memory module loaded; {}, but kernel {} predates RDMA dma-buf (5.12)",
                                       driver.how, kernelRelease)};
  }
  return {Tristate::kYes, fmt::format("dma-buf: {}, kernel {} (no peer-memory module)", driver.how, kernelRelease)};
}

Inventory readLocalInventory(const std::string& sysfsRoot) {
  Inventory inv = readInventory(sysfsRoot);
  std::error_code ec;
  if (inv.gpuDirect.ready != Tristate::kNo || !std::filesystem::equivalent(sysfsRoot, "/sys", ec)) return inv;
  utsname host{};
  const std::string release = uname(&host) == 0 ? host.release : "";
  inv.gpuDirect = withDmaBuf(inv.gpuDirect, askCudaDriver(), release);
  return inv;
}

}  // namespace fabricmap::topologies
