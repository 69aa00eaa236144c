// The GPU topology of one node as plain data: GPUs, NICs, the GPU x GPU link matrix and the
// GPU x NIC path matrix, whatever source filled it (saved `nvidia-smi topo -m` text, NVML, sysfs).
// Parsers and discovery produce it; classify.h judges it; topology_json.h prints it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabricmap::topologies {

// One cell of `nvidia-smi topo -m`. PCIe kinds are ordered best to worst, so comparisons of
// PCIe paths are comparisons of these values (see pcieRank).
enum class LinkKind : std::uint8_t {
  kSelf,     // X
  kNvLink,   // NV#: a bonded set of # NVLinks (direct or through NVSwitch)
  kPix,      // at most one PCIe bridge (same switch)
  kPxb,      // several PCIe bridges, no host bridge
  kPhb,      // through a PCIe host bridge (the CPU)
  kNode,     // between host bridges inside one NUMA node
  kSys,      // across the SMP interconnect between NUMA nodes (QPI/UPI/xGMI)
  kUnknown,  // not reported by the source
};

// Sources may know, deny, or not know a fact (NVSwitch present, P2P possible).
enum class Tristate : std::uint8_t { kNo, kYes, kUnknown };

enum class LinkLayer : std::uint8_t { kUnknown, kInfiniBand, kRoce, kEthernet };

enum class Source : std::uint8_t { kNvidiaSmiText, kNvml, kSysfs };

struct Link {
  LinkKind kind = LinkKind::kUnknown;
  int nvlinks = 0;                    // bonded NVLink count when kind == kNvLink, else 0
  Tristate p2p = Tristate::kUnknown;  // CUDA peer access possible (NVML P2P read status)
};

// What NVML says of the health of a GPU's memory. Each part stays unknown (-1, kUnknown) where the
// GPU or driver cannot say: no ECC on consumer GPUs, page retirement before Ampere, row remapping
// from Ampere on.
struct GpuMemoryHealth {
  Tristate ecc = Tristate::kUnknown;         // ECC on now
  Tristate eccPending = Tristate::kUnknown;  // ECC on after the next reset
  int retiredSingleBit = -1;  // pages retired for repeated single-bit ECC errors
  int retiredDoubleBit = -1;  // pages retired for a double-bit ECC error
  Tristate retirePending = Tristate::kUnknown;  // pages waiting for a reset to be retired
  int remappedCorrectable = -1;    // rows remapped for correctable errors
  int remappedUncorrectable = -1;  // rows remapped for uncorrectable errors
  Tristate remapPending = Tristate::kUnknown;  // a remap waits for a reset
  Tristate remapFailed = Tristate::kUnknown;   // a remap failed: the GPU needs replacing
};

struct GpuInfo {
  int index = 0;
  std::string name;               // "NVIDIA H100 80GB HBM3" as NVML names it; empty when unknown
  std::string uuid;               // "GPU-..."; empty when unknown
  std::string pciBusId;           // sysfs form "0000:18:00.0" (lower case); empty when unknown
  std::uint64_t memoryBytes = 0;  // 0: unknown
  int numaNode = -1;        // NUMA node of the CPUs nearest the GPU (NUMA Affinity); -1 unknown
  int gpuNumaId = -1;       // the GPU memory's own NUMA node (GH200/GB200); -1 none or unknown
  std::string cpuAffinity;  // CPU list "0-47,96-143"; empty when unknown
  int nvlinksInactive = 0;  // NVLinks the GPU has but that are down (NVML only)
  GpuMemoryHealth health;   // NVML only
};

struct NicInfo {
  std::string name;      // device name: mlx5_0 (RDMA) or ens1f0 (plain Ethernet); or NICn unnamed
  std::string label;     // "NIC0" as `nvidia-smi topo -m` labels it; empty otherwise
  std::string netdev;    // the Ethernet interface behind an RDMA device, when there is one
  std::string pciBusId;  // sysfs form; empty when unknown
  double rateGbps = 0;   // port rate in Gb/s (1e9 bit/s); 0: unknown
  LinkLayer linkLayer = LinkLayer::kUnknown;
  std::string state;  // port state as the kernel says it ("ACTIVE", "DOWN", "up"); empty unknown
  int numaNode = -1;
  bool rdma = false;  // an RDMA device (InfiniBand, RoCE, EFA): usable for GPUDirect RDMA
};

struct GpuTopology {
  std::string hostname;  // empty when parsed from text
  std::vector<GpuInfo> gpus;
  std::vector<NicInfo> nics;
  std::vector<std::vector<Link>> gpuLinks;    // gpus x gpus, kSelf on the diagonal
  std::vector<std::vector<LinkKind>> gpuNic;  // gpus x nics, PCIe path kinds
  Tristate nvswitch = Tristate::kUnknown;     // what the source reported; text sources cannot say
  std::vector<Source> sources;
  std::vector<std::string> warnings;

  int gpuCount() const { return static_cast<int>(gpus.size()); }
};

// An empty topology of `gpus` GPUs and `nics` NICs: indices set, self on the diagonal, every other
// cell kUnknown. Parsers and discovery fill it in; tests build synthetic nodes from it.
GpuTopology makeTopology(int gpus, int nics);

// Lower is better: kSelf 0, kNvLink 1, kPix 2 ... kSys 6, kUnknown 7.
int pcieRank(LinkKind kind);
// The `nvidia-smi topo -m` code of a cell: "X", "NV12", "PIX", ..., "?" for unknown.
std::string linkCode(const Link& link);
std::string_view linkKindName(LinkKind kind);  // "SELF", "NVLINK", "PIX", ..., "UNKNOWN"
// Parses "X", "NV#", "PIX", "PXB", "PHB", "NODE", "SYS" (and "SOC", the pre-2017 name for SYS);
// nullopt for anything else.
std::optional<Link> parseLinkCode(std::string_view code);
std::string_view linkLayerName(LinkLayer layer);  // "IB", "RoCE", "Ethernet", "unknown"
std::string_view tristateName(Tristate value);    // "yes", "no", "unknown"
std::string_view sourceName(Source source);       // "nvidia-smi", "nvml", "sysfs"
// Sources joined with '+', e.g. "nvml+sysfs"; "none" when empty.
std::string sourcesName(const std::vector<Source>& sources);

}  // namespace fabricmap::topologies
