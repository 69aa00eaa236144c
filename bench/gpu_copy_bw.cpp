// Device-to-device and host-device copy bandwidth of GPU 0, as fractions of what the hardware can
// do: device copies against the GPU model's memory bandwidth (topologies/specs), host copies
// against the PCIe link the GPU sits on (its generation and width from sysfs). Run by
// scripts/gpu-check.sh; needs a GPU.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "kernels/copy.h"
#include "topologies/specs.h"

namespace {

#define CHECK(expr)                                                                          \
  do {                                                                                       \
    const cudaError_t e_ = (expr);                                                           \
    if (e_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "%s: %s\n", #expr, cudaGetErrorString(e_));                       \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

// Median seconds of `reps` timed runs of `copy` (each enqueued `batch` times on `stream`).
template <class F>
double medianSeconds(cudaStream_t stream, int reps, int batch, F&& copy) {
  cudaEvent_t start = nullptr;
  cudaEvent_t end = nullptr;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&end));
  copy();  // warm-up
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    CHECK(cudaEventRecord(start, stream));
    for (int b = 0; b < batch; ++b) copy();
    CHECK(cudaEventRecord(end, stream));
    CHECK(cudaEventSynchronize(end));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, end));
    t.push_back(static_cast<double>(ms) / 1e3 / batch);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(end);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// PCIe link of a device from sysfs: per-direction GB/s of its current generation and width.
std::optional<double> pcieLinkGBps(const std::string& busId) {
  std::string id = busId;
  std::transform(id.begin(), id.end(), id.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (id.size() > 12) id = id.substr(id.size() - 12);  // "0000:3b:00.0"
  std::ifstream speed("/sys/bus/pci/devices/" + id + "/current_link_speed");
  std::ifstream width("/sys/bus/pci/devices/" + id + "/current_link_width");
  double gts = 0;
  int lanes = 0;
  if (!(speed >> gts) || !(width >> lanes)) return std::nullopt;
  // 8 GT/s and up use 128b/130b encoding (PCIe 6's FLIT mode is close to it)
  const double efficiency = gts >= 8 ? 128.0 / 130.0 : 0.8;
  return gts * lanes * efficiency / 8.0;
}

}  // namespace

int main() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "gpu_copy_bw: no GPU visible\n");
    return 1;
  }
  CHECK(cudaSetDevice(0));
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  char busId[32] = {};
  CHECK(cudaDeviceGetPCIBusId(busId, sizeof busId, 0));
  const auto spec = fabricmap::topologies::gpuSpecForName(prop.name);
  std::printf("device 0: %s (%s), %s\n", prop.name, busId,
              spec ? std::string(spec->model).c_str() : "model not in the reference specs");

  cudaStream_t stream = nullptr;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const std::size_t devBytes = 1ull << 30;
  void* a = nullptr;
  void* b = nullptr;
  CHECK(cudaMalloc(&a, devBytes));
  CHECK(cudaMalloc(&b, devBytes));
  CHECK(cudaMemset(a, 1, devBytes));
  // a device copy reads and writes every byte: memory traffic is twice the bytes copied
  const double ce = medianSeconds(stream, 7, 5, [&] { CHECK(cudaMemcpyAsync(b, a, devBytes, cudaMemcpyDeviceToDevice, stream)); });
  const double sm = medianSeconds(stream, 7, 5, [&] { CHECK(fabricmap::kernels::smCopy(b, a, devBytes, 0, stream)); });
  for (const auto& [name, seconds] : {std::pair{"copy engine", ce}, std::pair{"SM kernel", sm}}) {
    const double copied = static_cast<double>(devBytes) / seconds / 1e9;
    std::printf("device-to-device %-11s 1 GiB: %8.1f GB/s copied, %8.1f GB/s memory traffic", name, copied,
                2 * copied);
    if (spec && spec->memoryGBps > 0) std::printf(" = %.2f of %.0f GB/s peak", 2 * copied / spec->memoryGBps, spec->memoryGBps);
    std::printf("\n");
  }

  const std::size_t hostBytes = 256ull << 20;
  void* host = nullptr;
  CHECK(cudaHostAlloc(&host, hostBytes, cudaHostAllocDefault));
  const double h2d = medianSeconds(stream, 7, 4, [&] { CHECK(cudaMemcpyAsync(a, host, hostBytes, cudaMemcpyHostToDevice, stream)); });
  const double d2h = medianSeconds(stream, 7, 4, [&] { CHECK(cudaMemcpyAsync(host, a, hostBytes, cudaMemcpyDeviceToHost, stream)); });
  const auto link = pcieLinkGBps(busId);
  for (const auto& [name, seconds] : {std::pair{"host-to-device", h2d}, std::pair{"device-to-host", d2h}}) {
    const double rate = static_cast<double>(hostBytes) / seconds / 1e9;
    std::printf("%-14s pinned 256 MiB: %8.1f GB/s", name, rate);
    if (link) std::printf(" = %.2f of the PCIe link's %.1f GB/s", rate / *link, *link);
    std::printf("\n");
  }
  cudaFreeHost(host);
  cudaFree(a);
  cudaFree(b);
  cudaStreamDestroy(stream);
  return 0;
}
