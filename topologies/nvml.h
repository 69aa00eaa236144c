// The few NVML questions discovery asks, as C++ values. loadNvml() binds them to the driver's
// libnvidia-ml at run time, so the project builds and runs where no driver or nvml.h exists; tests
// implement NvmlApi to play a node they cannot have.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "topologies/gpu_topology.h"

namespace fabricmap::topologies {

// NVML_NVLINK_MAX_LINKS of current drivers: link indices run 0..17.
inline constexpr int kNvmlMaxNvLinks = 18;

class NvmlApi {
 public:
  enum class LinkState : std::uint8_t {
    kActive,
    kInactive,  // the GPU has this link, and it is down
    kAbsent,    // no such link on this GPU (NVML: not supported / invalid argument)
    kUnknown,   // the query failed or the entry point is missing
  };
  enum class RemoteType : std::uint8_t { kGpu, kSwitch, kIbmNpu, kUnknown };

  virtual ~NvmlApi() = default;

  virtual int deviceCount() = 0;
  // Why GPU `gpu` cannot be queried (no handle: permission, GPU lost); empty when it can.
  virtual std::string deviceError(int gpu) = 0;
  virtual std::optional<std::string> name(int gpu) = 0;
  virtual std::optional<std::string> uuid(int gpu) = 0;
  virtual std::optional<std::string> pciBusId(int gpu) = 0;  // as NVML writes it: 00000000:18:00.0
  virtual std::optional<std::uint64_t> memoryBytes(int gpu) = 0;
  virtual LinkState nvlinkState(int gpu, int link) = 0;
  virtual std::optional<std::string> nvlinkRemoteBusId(int gpu, int link) = 0;
  virtual RemoteType nvlinkRemoteType(int gpu, int link) = 0;
  // The PCIe path between two GPUs (nvmlDeviceGetTopologyCommonAncestor), as topo -m writes it.
  virtual std::optional<LinkKind> commonAncestor(int a, int b) = 0;
  // Whether CUDA peer reads work between two GPUs (nvmlDeviceGetP2PStatus, READ capability).
  virtual Tristate p2pRead(int a, int b) = 0;
  // ECC mode, retired pages and remapped rows (unknown where NVML cannot say); tests playing a
  // node without them need not say.
  virtual GpuMemoryHealth memoryHealth(int /*gpu*/) { return {}; }
  // Optional entry points the loaded library lacks (older drivers), for discovery to report.
  virtual std::vector<std::string> missingSymbols() const = 0;
};

struct NvmlLoad {
  std::unique_ptr<NvmlApi> api;  // null when NVML is not available
  std::string error;             // why not: the dlopen error, a missing symbol, nvmlInit's failure
};

// dlopen()s `library`, resolves the entry points and calls nvmlInit_v2; the returned api calls
// nvmlShutdown and dlclose()s when destroyed.
NvmlLoad loadNvml(const std::string& library = "libnvidia-ml.so.1");

}  // namespace fabricmap::topologies
