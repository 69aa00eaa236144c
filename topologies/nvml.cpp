// NVML loaded at run time (see nvml.h). No nvml.h exists on the build machines, so the few types
// and entry points used are declared here, with the layouts and values of NVIDIA's nvml.h.
#include "topologies/nvml.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace fabricmap::topologies {
namespace {

// ---- declarations matching nvml.h (C enums are int-sized)
using nvmlReturn_t = int;
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;

constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr nvmlReturn_t kNvmlErrorInvalidArgument = 2;
constexpr nvmlReturn_t kNvmlErrorNotSupported = 3;
constexpr nvmlReturn_t kNvmlErrorInsufficientSize = 7;

struct NvmlPciInfo {  // nvmlPciInfo_t
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];
};

struct NvmlMemory {  // nvmlMemory_t (v1)
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

constexpr unsigned kNameBufferSize = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr unsigned kUuidBufferSize = 96;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE
constexpr int kEnableStateEnabled = 1;    // NVML_FEATURE_ENABLED
constexpr int kRemoteGpu = 0;             // NVML_NVLINK_DEVICE_TYPE_GPU
constexpr int kRemoteIbmNpu = 1;          // NVML_NVLINK_DEVICE_TYPE_IBMNPU
constexpr int kRemoteSwitch = 2;          // NVML_NVLINK_DEVICE_TYPE_SWITCH
constexpr int kP2pCapsRead = 0;           // NVML_P2P_CAPS_INDEX_READ
constexpr int kP2pStatusOk = 0;           // NVML_P2P_STATUS_OK
constexpr int kP2pStatusUnknown = 6;      // NVML_P2P_STATUS_UNKNOWN
constexpr int kRetiredSingleBit = 0;      // NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS
constexpr int kRetiredDoubleBit = 1;      // NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR

using InitFn = nvmlReturn_t (*)();
using ShutdownFn = nvmlReturn_t (*)();
using ErrorStringFn = const char* (*)(nvmlReturn_t);
using CountFn = nvmlReturn_t (*)(unsigned int*);
using HandleFn = nvmlReturn_t (*)(unsigned int, nvmlDevice_t*);
using StringFn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);
using PciInfoFn = nvmlReturn_t (*)(nvmlDevice_t, NvmlPciInfo*);
using MemoryFn = nvmlReturn_t (*)(nvmlDevice_t, NvmlMemory*);
using LinkStateFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, int*);
using RemotePciFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, NvmlPciInfo*);
using RemoteTypeFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, int*);
using AncestorFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlDevice_t, int*);
using P2pFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlDevice_t, int, int*);
using EccModeFn = nvmlReturn_t (*)(nvmlDevice_t, int*, int*);
using RetiredPagesFn = nvmlReturn_t (*)(nvmlDevice_t, int, unsigned int*, unsigned long long*);
using EnableStateFn = nvmlReturn_t (*)(nvmlDevice_t, int*);
using RemappedRowsFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, unsigned int*, unsigned int*, unsigned int*);

Tristate enabled(int state) { return state == kEnableStateEnabled ? Tristate::kYes : Tristate::kNo; }
Tristate flag(unsigned int value) { return value != 0 ? Tristate::kYes : Tristate::kNo; }

std::optional<LinkKind> kindFromTopologyLevel(int level) {
  switch (level) {
    case 0:   // NVML_TOPOLOGY_INTERNAL: two GPUs on one board
    case 10:  // NVML_TOPOLOGY_SINGLE
      return LinkKind::kPix;
    case 20: return LinkKind::kPxb;   // NVML_TOPOLOGY_MULTIPLE
    case 30: return LinkKind::kPhb;   // NVML_TOPOLOGY_HOSTBRIDGE
    case 40: return LinkKind::kNode;  // NVML_TOPOLOGY_NODE
    case 50: return LinkKind::kSys;   // NVML_TOPOLOGY_SYSTEM
    default: return std::nullopt;
  }
}

class DlNvml final : public NvmlApi {
 public:
  explicit DlNvml(void* library) : library_(library) {}
  DlNvml(const DlNvml&) = delete;
  DlNvml& operator=(const DlNvml&) = delete;
  ~DlNvml() override {
    if (initialized_ && shutdown_) shutdown_();
    dlclose(library_);
  }

  // Resolves the entry points and initializes NVML; returns why not on failure.
  std::string start() {
    bind(init_, "nvmlInit_v2", true);
    bind(shutdown_, "nvmlShutdown", true);
    bind(count_, "nvmlDeviceGetCount_v2", true);
    bind(handle_, "nvmlDeviceGetHandleByIndex_v2", true);
    bind(errorString_, "nvmlErrorString", false);
    bind(name_, "nvmlDeviceGetName", false);
    bind(uuid_, "nvmlDeviceGetUUID", false);
    bind(pciInfo_, "nvmlDeviceGetPciInfo_v3", false);
    bind(memory_, "nvmlDeviceGetMemoryInfo", false);
    bind(linkState_, "nvmlDeviceGetNvLinkState", false);
    bind(remotePci_, "nvmlDeviceGetNvLinkRemotePciInfo_v2", false);
    bind(remoteType_, "nvmlDeviceGetNvLinkRemoteDeviceType", false);
    bind(ancestor_, "nvmlDeviceGetTopologyCommonAncestor", false);
    bind(p2p_, "nvmlDeviceGetP2PStatus", false);
    bind(eccMode_, "nvmlDeviceGetEccMode", false);
    bind(retiredPages_, "nvmlDeviceGetRetiredPages", false);
    bind(retirePending_, "nvmlDeviceGetRetiredPagesPendingStatus", false);
    bind(remappedRows_, "nvmlDeviceGetRemappedRows", false);
    if (!requiredMissing_.empty()) {
      return fmt::format("libnvidia-ml lacks {}", fmt::join(requiredMissing_, ", "));
    }
    if (const nvmlReturn_t rc = init_(); rc != kNvmlSuccess) {
      return fmt::format("nvmlInit_v2 failed: {}", errorText(rc));
    }
    initialized_ = true;
    unsigned int count = 0;
    if (const nvmlReturn_t rc = count_(&count); rc != kNvmlSuccess) {
      return fmt::format("nvmlDeviceGetCount_v2 failed: {}", errorText(rc));
    }
    handles_.assign(count, nullptr);
    handleErrors_.assign(count, {});
    for (unsigned int i = 0; i < count; ++i) {
      if (const nvmlReturn_t rc = handle_(i, &handles_[i]); rc != kNvmlSuccess) {
        handles_[i] = nullptr;
        handleErrors_[i] =
            fmt::format("nvmlDeviceGetHandleByIndex_v2({}) failed: {}", i, errorText(rc));
      }
    }
    return {};
  }

  int deviceCount() override { return static_cast<int>(handles_.size()); }

  std::string deviceError(int gpu) override {
    return handleErrors_.at(static_cast<std::size_t>(gpu));
  }

  std::optional<std::string> name(int gpu) override { return text(name_, gpu, kNameBufferSize); }
  std::optional<std::string> uuid(int gpu) override { return text(uuid_, gpu, kUuidBufferSize); }

  std::optional<std::string> pciBusId(int gpu) override {
    NvmlPciInfo info{};
    if (!pciInfo_ || !device(gpu) || pciInfo_(device(gpu), &info) != kNvmlSuccess)
      return std::nullopt;
    info.busId[sizeof info.busId - 1] = '\0';
    return std::string(info.busId);
  }

  std::optional<std::uint64_t> memoryBytes(int gpu) override {
    NvmlMemory memory{};
    if (!memory_ || !device(gpu) || memory_(device(gpu), &memory) != kNvmlSuccess)
      return std::nullopt;
    return memory.total;
  }

  LinkState nvlinkState(int gpu, int link) override {
    if (!linkState_ || !device(gpu)) return LinkState::kUnknown;
    int active = 0;
    const nvmlReturn_t rc = linkState_(device(gpu), static_cast<unsigned int>(link), &active);
    if (rc == kNvmlErrorNotSupported || rc == kNvmlErrorInvalidArgument) return LinkState::kAbsent;
    if (rc != kNvmlSuccess) return LinkState::kUnknown;
    return active == kEnableStateEnabled ? LinkState::kActive : LinkState::kInactive;
  }

  std::optional<std::string> nvlinkRemoteBusId(int gpu, int link) override {
    NvmlPciInfo info{};
    if (!remotePci_ || !device(gpu) ||
        remotePci_(device(gpu), static_cast<unsigned int>(link), &info) != kNvmlSuccess) {
      return std::nullopt;
    }
    info.busId[sizeof info.busId - 1] = '\0';
    return std::string(info.busId);
  }

  RemoteType nvlinkRemoteType(int gpu, int link) override {
    int type = -1;
    if (!remoteType_ || !device(gpu) ||
        remoteType_(device(gpu), static_cast<unsigned int>(link), &type) != kNvmlSuccess) {
      return RemoteType::kUnknown;
    }
    if (type == kRemoteGpu) return RemoteType::kGpu;
    if (type == kRemoteSwitch) return RemoteType::kSwitch;
    if (type == kRemoteIbmNpu) return RemoteType::kIbmNpu;
    return RemoteType::kUnknown;
  }

  std::optional<LinkKind> commonAncestor(int a, int b) override {
    int level = -1;
    if (!ancestor_ || !device(a) || !device(b) ||
        ancestor_(device(a), device(b), &level) != kNvmlSuccess) {
      return std::nullopt;
    }
    return kindFromTopologyLevel(level);
  }

  Tristate p2pRead(int a, int b) override {
    int status = kP2pStatusUnknown;
    if (!p2p_ || !device(a) || !device(b) ||
        p2p_(device(a), device(b), kP2pCapsRead, &status) != kNvmlSuccess ||
        status == kP2pStatusUnknown) {
      return Tristate::kUnknown;
    }
    return status == kP2pStatusOk ? Tristate::kYes : Tristate::kNo;
  }

  GpuMemoryHealth memoryHealth(int gpu) override {
    GpuMemoryHealth h;
    nvmlDevice_t d = device(gpu);
    if (d == nullptr) return h;
    int current = 0;
    int pending = 0;
    if (eccMode_ && eccMode_(d, &current, &pending) == kNvmlSuccess) {
      h.ecc = enabled(current);
      h.eccPending = enabled(pending);
    }
    h.retiredSingleBit = retiredPages(d, kRetiredSingleBit);
    h.retiredDoubleBit = retiredPages(d, kRetiredDoubleBit);
    if (int state = 0; retirePending_ && retirePending_(d, &state) == kNvmlSuccess) h.retirePending = enabled(state);
    unsigned int correctable = 0;
    unsigned int uncorrectable = 0;
    unsigned int remapPending = 0;
    unsigned int failed = 0;
    if (remappedRows_ && remappedRows_(d, &correctable, &uncorrectable, &remapPending, &failed) == kNvmlSuccess) {
      h.remappedCorrectable = static_cast<int>(correctable);
      h.remappedUncorrectable = static_cast<int>(uncorrectable);
      h.remapPending = flag(remapPending);
      h.remapFailed = flag(failed);
    }
    return h;
  }

  std::vector<std::string> missingSymbols() const override { return optionalMissing_; }

 private:
  template <typename Fn>
  void bind(Fn& fn, const char* symbol, bool required) {
    // POSIX guarantees a dlsym result converts to a function pointer.
    fn = reinterpret_cast<Fn>(dlsym(library_, symbol));
    if (!fn) (required ? requiredMissing_ : optionalMissing_).emplace_back(symbol);
  }

  nvmlDevice_t device(int gpu) const {
    return gpu >= 0 && gpu < static_cast<int>(handles_.size()) ? handles_[gpu] : nullptr;
  }

  std::optional<std::string> text(StringFn fn, int gpu, unsigned int size) const {
    if (!fn || !device(gpu)) return std::nullopt;
    std::string buffer(size, '\0');
    if (fn(device(gpu), buffer.data(), size) != kNvmlSuccess) return std::nullopt;
    if (const std::size_t end = buffer.find('\0'); end != std::string::npos) buffer.resize(end);
    return buffer;
  }

  // How many pages were retired for `cause`; -1 where NVML cannot say. Asked with room for none:
  // NVML then says how many there are.
  int retiredPages(nvmlDevice_t d, int cause) const {
    if (!retiredPages_) return -1;
    unsigned int count = 0;
    unsigned long long none = 0;
    const nvmlReturn_t rc = retiredPages_(d, cause, &count, &none);
    return rc == kNvmlSuccess || rc == kNvmlErrorInsufficientSize ? static_cast<int>(count) : -1;
  }

  std::string errorText(nvmlReturn_t rc) const {
    if (errorString_) {
      if (const char* s = errorString_(rc)) return fmt::format("{} ({})", s, rc);
    }
    return fmt::format("NVML error {}", rc);
  }

  void* library_;
  bool initialized_ = false;
  std::vector<std::string> requiredMissing_;
  std::vector<std::string> optionalMissing_;
  std::vector<nvmlDevice_t> handles_;
  std::vector<std::string> handleErrors_;
  InitFn init_ = nullptr;
  ShutdownFn shutdown_ = nullptr;
  ErrorStringFn errorString_ = nullptr;
  CountFn count_ = nullptr;
  HandleFn handle_ = nullptr;
  StringFn name_ = nullptr;
  StringFn uuid_ = nullptr;
  PciInfoFn pciInfo_ = nullptr;
  MemoryFn memory_ = nullptr;
  LinkStateFn linkState_ = nullptr;
  RemotePciFn remotePci_ = nullptr;
  RemoteTypeFn remoteType_ = nullptr;
  AncestorFn ancestor_ = nullptr;
  P2pFn p2p_ = nullptr;
  EccModeFn eccMode_ = nullptr;
  RetiredPagesFn retiredPages_ = nullptr;
  EnableStateFn retirePending_ = nullptr;
  RemappedRowsFn remappedRows_ = nullptr;
};

}  // namespace

NvmlLoad loadNvml(const std::string& library) {
  NvmlLoad load;
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    load.error = why ? why : fmt::format("cannot load {}", library);
    return load;
  }
  auto api = std::make_unique<DlNvml>(handle);
  load.error = api->start();
  if (load.error.empty()) load.api = std::move(api);
  return load;
}

}  // namespace fabricmap::topologies
