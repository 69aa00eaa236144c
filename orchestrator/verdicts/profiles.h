// Acceptance profiles for `fabricmap verify`: what a system must show to be accepted (topology
// class, GPUs per node, large-message all_reduce busbw inside a node and per NIC across nodes, the
// worst pair against the median, scaling efficiency). Built-in profiles are one table whose
// figures cite shared/REFERENCE.md; `custom` profiles come from a small key = value file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabricmap::orchestrator {

// A requirement left unset is not checked.
struct Profile {
  std::string name;
  std::string source;  // "built-in" or the file it was read from
  std::optional<std::string> topologyClass;  // every node's class: FULL_NVSWITCH, PCIE_ONLY, ...
  std::optional<int> gpusPerNode;
  std::optional<std::string> gpuModel;  // every GPU's device name contains it ("H100")
  std::optional<double> minIntraAllReduceBusbw;         // GB/s, each node's plateau
  std::optional<double> minInterAllReduceBusbwPerNic;   // GB/s, per NIC
  std::optional<int> nicsPerNode;  // used when the file records no NICs (host-memory runs)
  std::optional<double> minPairFraction;      // worst pair / median of its link class, 0..1
  std::optional<double> minScalingEfficiency;  // /patterns/scaling "gpus" at the largest n
  // The hardware, from the file's /inventory and ranks (issue 16): each GPU's memory in GB (1e9 B,
  // NVML's total: an 80 GB H100 shows 85.5), every active RDMA port's rate (Gb/s), active RDMA
  // ports per GPU, GPUDirect RDMA on every node, the error counters' growth during the run per
  // node, and each node's node pairs as a share of what its NICs carry (analysis lineRateShares).
  std::optional<double> minGpuMemoryGb;
  std::optional<double> minNicRateGbps;
  std::optional<double> minNicsPerGpu;
  bool gpuDirectRequired = false;
  bool numaBindingRequired = false;  // every rank's CPUs near its GPU (analysis rankBindings)
  // every GPU's ECC on, no failed or pending row remap or page retirement (/inventory/gpus)
  bool gpuMemoryHealthRequired = false;
  std::optional<std::uint64_t> maxLinkErrors;
  std::optional<double> minLineRateFraction;
  // The largest all_reduce size measured must reach this for a plateau to be judged (NVSwitch
  // busbw plateaus only at multi-GiB messages; a 256 MiB sweep would judge the ramp). 0: any.
  std::uint64_t minPlateauBytes = 0;
  std::vector<std::string> sources;  // where each figure comes from, one line per figure
  bool requiresSomething() const;
};

// The built-in profiles, in order: hgx-h100-8, hgx-a100-8 (80 GB), hgx-a100-40gb-8, hgx-h200-8,
// pcie-8.
const std::vector<Profile>& builtinProfiles();
std::optional<Profile> findProfile(std::string_view name);
std::string profileNames();  // "hgx-h100-8, hgx-a100-8, ..." for messages

// Parses a profile file's text (the format README.md documents: `key = value` lines, `#`
// comments, `base = <built-in>` first to start from one). Throws UsageError "FILE:LINE: ..." for
// anything else; never anything but UsageError.
Profile parseProfile(std::string_view text, std::string_view fileName);
// Reads and parses a profile file (at most 64 KiB); UsageError when unreadable.
Profile readProfileFile(const std::string& path);

}  // namespace fabricmap::orchestrator
