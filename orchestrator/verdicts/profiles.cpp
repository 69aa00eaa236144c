// Acceptance profiles: the built-in table and the profile-file parser.
#include "orchestrator/verdicts/profiles.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>
#include <set>

#include "core/files.h"
#include "core/text.h"
#include "core/error.h"
#include "core/units.h"
#include "topologies/classify.h"

namespace fabricmap::orchestrator {
namespace {

// Built-in minimums are this share of the practical figure shared/REFERENCE.md records (not of the
// theoretical peak): healthy systems land within a few percent of those figures, so 0.8 leaves
// room for run-to-run noise and NCCL version differences while a missing NVLink, a PCIe-fallback
// GPU or a NIC at half rate (all below 0.6) still fails.
constexpr double kPracticalShare = 0.8;
constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
constexpr std::size_t kMaxFileBytes = 64 * 1024;
constexpr std::size_t kMaxLineBytes = 1024;

std::vector<Profile> makeBuiltins() {
  // HGX 8-GPU boards: NVSwitch full mesh, one rail NIC per GPU.
  const auto hgx = [](const char* name, const char* model, double intraPractical, const char* intraSource,
                      double nicPractical, const char* nicSource, double memoryGb, double nicGbps) {
    Profile p;
    p.name = name;
    p.source = "built-in";
    p.topologyClass = "FULL_NVSWITCH";
    p.gpusPerNode = 8;
    p.gpuModel = model;
    p.minIntraAllReduceBusbw = kPracticalShare * intraPractical;
    p.minInterAllReduceBusbwPerNic = kPracticalShare * nicPractical;
    p.nicsPerNode = 8;
    p.minPairFraction = 0.9;
    p.minScalingEfficiency = 0.8;
    p.minPlateauBytes = kGiB;
    p.minGpuMemoryGb = memoryGb;
    p.minNicRateGbps = nicGbps;
    p.minNicsPerGpu = 1;
    p.gpuDirectRequired = true;
    p.numaBindingRequired = true;
    p.gpuMemoryHealthRequired = true;
    p.minLineRateFraction = 0.8;
    p.sources = {
        fmt::format("gpu_memory_gb {:g}: the product's memory (NVML's total is a little more: 80 GB H100 85.5, 141 GB "
                    "H200 150.7)",
                    memoryGb),
        fmt::format("nic_rate_gbps {:g}: the rail NICs' rate on these systems (REFERENCE.md)", nicGbps),
        "nics_per_gpu 1: one rail NIC per GPU on HGX systems (REFERENCE.md)",
        "gpudirect required: NCCL's inter-node GPU traffic bypasses host memory only with GPUDirect RDMA",
        "numa_binding required: a rank on the far socket crosses the CPU interconnect for every host copy",
        "gpu_memory_health required: data-center GPUs ship with ECC on; a failed or pending row remap needs a "
        "replacement or a reset (NVML)",
        "min_line_rate_fraction 0.8: ib_write_bw reaches 46-49 of 50 GB/s on 400G (REFERENCE.md); 0.8 leaves room "
        "for the host path (max_link_errors is left to profile files: fabrics' error thresholds differ)",
        fmt::format("min_intra_allreduce_busbw {:.1f} GB/s = 0.8 x {:.0f} GB/s, {}", *p.minIntraAllReduceBusbw,
                    intraPractical, intraSource),
        fmt::format("min_inter_allreduce_busbw_per_nic {:.1f} GB/s = 0.8 x {:.0f} GB/s, {}",
                    *p.minInterAllReduceBusbwPerNic, nicPractical, nicSource),
        "min_pair_fraction 0.9: an NVSwitch mesh is uniform (REFERENCE.md signatures); ClusterKit calls a pair bad "
        "below 93% of the best, here 90% of the median",
        "min_scaling_efficiency 0.8: NVSwitch busbw barely depends on the GPU count; a judgement, no published "
        "figure",
        "min_plateau_bytes 1 GiB: NVSwitch busbw plateaus only at multi-GiB messages (REFERENCE.md)",
    };
    return p;
  };
  std::vector<Profile> all;
  constexpr const char* kNdr = "400G NDR per NIC 46-49 GB/s (REFERENCE.md: nccl-tests issues 119, 160, 290)";
  constexpr const char* kA100 = "8x A100 SXM all_reduce 230-235 GB/s (REFERENCE.md: nccl-tests issue 175, Azure ND A100 v4)";
  constexpr const char* kHdr = "200G HDR per NIC ~24 GB/s (REFERENCE.md; DGX A100 8x200G ~192 = 8 x 24, nccl issue 812)";
  all.push_back(hgx("hgx-h100-8", "H100", 370,
                    "8x H100 SXM Ring all_reduce (REFERENCE.md: nccl-tests issue 212; NVLS reaches ~480)", 46, kNdr, 80,
                    400));
  all.push_back(hgx("hgx-a100-8", "A100", 230, kA100, 24, kHdr, 80, 200));
  all.push_back(hgx("hgx-a100-40gb-8", "A100", 230, kA100, 24, kHdr, 40, 200));
  all.push_back(hgx("hgx-h200-8", "H200", 475, "8x H200 SXM all_reduce ~475-480 GB/s (REFERENCE.md: nccl-tests issue 272)",
                    46, kNdr, 141, 400));
  Profile pcie;
  pcie.name = "pcie-8";
  pcie.source = "built-in";
  pcie.topologyClass = "PCIE_ONLY";
  pcie.gpusPerNode = 8;
  pcie.minIntraAllReduceBusbw = kPracticalShare * 28;
  pcie.minInterAllReduceBusbwPerNic = kPracticalShare * 12;
  pcie.minPairFraction = 0.4;
  pcie.minScalingEfficiency = 0.5;
  pcie.minPlateauBytes = 256ull << 20;
  pcie.sources = {
      "min_intra_allreduce_busbw 22.4 GB/s = 0.8 x 28 GB/s, 8x RTX 5090 PCIe-only all_reduce (REFERENCE.md: nccl "
      "issue 1639)",
      "min_inter_allreduce_busbw_per_nic 9.6 GB/s = 0.8 x 12 GB/s per 100G NIC (REFERENCE.md: nccl-tests issue 119)",
      "min_pair_fraction 0.4: PCIe pairs range 20-55 GB/s across NUMA nodes (REFERENCE.md signatures)",
      "min_scaling_efficiency 0.5: 8 GPUs share root complexes and cross the CPU; a judgement, no published figure",
      "min_plateau_bytes 256 MiB: PCIe busbw plateaus well below NVSwitch sizes; a judgement",
  };
  all.push_back(std::move(pcie));
  return all;
}

// Text from a hostile file, safe to print (core/text.h).
std::string shown(std::string_view text, std::size_t limit = 40) { return core::printable(text, limit); }

std::string_view trimmed(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

class Parser {
 public:
  Parser(std::string_view fileName, Profile& profile) : file_(fileName), p_(profile) {}

  [[noreturn]] void fail(int line, const std::string& why) const {
    throw core::UsageError(fmt::format("{}:{}: {}", shown(file_, 256), line, why));
  }

  double number(int line, std::string_view key, std::string_view value, double lo, double hi) const {
    double v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size() || !std::isfinite(v))
      fail(line, fmt::format("{}: '{}' is not a number", key, shown(value)));
    if (v < lo || v > hi) fail(line, fmt::format("{}: {} is outside {}..{}", key, shown(value), lo, hi));
    return v;
  }

  int integer(int line, std::string_view key, std::string_view value, int lo, int hi) const {
    int v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size())
      fail(line, fmt::format("{}: '{}' is not a whole number", key, shown(value)));
    if (v < lo || v > hi) fail(line, fmt::format("{}: {} is outside {}..{}", key, v, lo, hi));
    return v;
  }

  void set(int line, std::string_view key, std::string_view value, bool first) {
    if (!seen_.insert(std::string(key)).second) fail(line, fmt::format("{} given twice", key));
    const bool none = value == "none";  // drops a requirement a base profile states
    const auto noted = [&](std::string_view what) {
      std::erase_if(p_.sources, [&](const std::string& s) { return s.starts_with(std::string(key) + " "); });
      if (!none) p_.sources.push_back(fmt::format("{} {}: {}:{}", key, what, shown(file_, 256), line));
    };
    if (key == "base") {
      if (!first) fail(line, "base must come before every other key");
      const auto base = findProfile(value);
      if (!base) fail(line, fmt::format("base: unknown profile '{}' (built-in: {})", shown(value), profileNames()));
      const std::string name = p_.name;
      const std::string source = p_.source;
      p_ = *base;
      p_.name = name;
      p_.source = source;
      p_.sources.insert(p_.sources.begin(), fmt::format("base {}: {}:{}", base->name, shown(file_, 256), line));
    } else if (key == "name") {
      if (value.size() > 64 || value.find('"') != std::string_view::npos)
        fail(line, "name: at most 64 characters, no quotes");
      p_.name = std::string(value);
    } else if (key == "topology_class") {
      if (none) {
        p_.topologyClass.reset();
      } else {
        if (!topologies::classFromName(value))
          fail(line, fmt::format("topology_class: unknown class '{}' (FULL_NVSWITCH, NVLINK_DIRECT_MESH, NVLINK_PAIRS, "
                                 "NVLINK_PARTIAL_MESH, PCIE_ONLY, SINGLE_GPU, NO_GPU)",
                                 shown(value)));
        p_.topologyClass = std::string(value);
      }
      noted(value);
    } else if (key == "gpu_model") {
      if (value.size() > 64) fail(line, "gpu_model: at most 64 characters");
      p_.gpuModel = none ? std::nullopt : std::optional<std::string>(value);
      noted(value);
    } else if (key == "gpus_per_node" || key == "nics_per_node") {
      std::optional<int>& field = key == "gpus_per_node" ? p_.gpusPerNode : p_.nicsPerNode;
      field = none ? std::nullopt : std::optional<int>(integer(line, key, value, key == "gpus_per_node" ? 0 : 1, 4096));
      noted(value);
    } else if (key == "min_intra_allreduce_busbw" || key == "min_inter_allreduce_busbw_per_nic") {
      std::optional<double>& field =
          key == "min_intra_allreduce_busbw" ? p_.minIntraAllReduceBusbw : p_.minInterAllReduceBusbwPerNic;
      field = none ? std::nullopt : std::optional<double>(number(line, key, value, 0, 1e6));
      noted(fmt::format("{} GB/s", value));
    } else if (key == "min_pair_fraction" || key == "min_scaling_efficiency") {
      std::optional<double>& field = key == "min_pair_fraction" ? p_.minPairFraction : p_.minScalingEfficiency;
      field = none ? std::nullopt : std::optional<double>(number(line, key, value, 0, key == "min_pair_fraction" ? 1 : 2));
      noted(value);
    } else if (key == "gpu_memory_gb" || key == "nic_rate_gbps" || key == "nics_per_gpu" ||
               key == "min_line_rate_fraction") {
      std::optional<double>& field = key == "gpu_memory_gb"   ? p_.minGpuMemoryGb
                                     : key == "nic_rate_gbps" ? p_.minNicRateGbps
                                     : key == "nics_per_gpu"  ? p_.minNicsPerGpu
                                                              : p_.minLineRateFraction;
      const double most = key == "min_line_rate_fraction" ? 1 : key == "nics_per_gpu" ? 64 : 1e5;
      field = none ? std::nullopt : std::optional<double>(number(line, key, value, 0, most));
      noted(value);
    } else if (key == "gpudirect" || key == "numa_binding" || key == "gpu_memory_health") {
      if (!none && value != "required") fail(line, fmt::format("{}: '{}' is not required or none", key, shown(value)));
      (key == "gpudirect"      ? p_.gpuDirectRequired
       : key == "numa_binding" ? p_.numaBindingRequired
                               : p_.gpuMemoryHealthRequired) = !none;
      noted(value);
    } else if (key == "max_link_errors") {
      p_.maxLinkErrors = none ? std::nullopt
                              : std::optional<std::uint64_t>(integer(line, key, value, 0, 1000000000));
      noted(value);
    } else if (key == "min_plateau_bytes") {
      try {
        p_.minPlateauBytes = none ? 0 : core::parseBytes(value, key);
      } catch (const core::UsageError&) {
        fail(line, fmt::format("min_plateau_bytes: '{}' is not a byte count such as 256M or 1G", shown(value)));
      }
      noted(value);
    } else {
      fail(line, fmt::format("unknown key '{}' (base, name, topology_class, gpus_per_node, gpu_model, "
                             "min_intra_allreduce_busbw, min_inter_allreduce_busbw_per_nic, nics_per_node, "
                             "min_pair_fraction, min_scaling_efficiency, min_plateau_bytes, gpu_memory_gb, "
                             "nic_rate_gbps, nics_per_gpu, gpudirect, numa_binding, gpu_memory_health, max_link_errors, "
                             "min_line_rate_fraction)",
                             shown(key)));
    }
  }

 private:
  std::string_view file_;
  Profile& p_;
  std::set<std::string> seen_;
};

}  // namespace

bool Profile::requiresSomething() const {
  return topologyClass || gpusPerNode || gpuModel || minIntraAllReduceBusbw || minInterAllReduceBusbwPerNic ||
         minPairFraction || minScalingEfficiency || minGpuMemoryGb || minNicRateGbps || minNicsPerGpu ||
         gpuDirectRequired || numaBindingRequired || gpuMemoryHealthRequired || maxLinkErrors || minLineRateFraction;
}

const std::vector<Profile>& builtinProfiles() {
  static const std::vector<Profile> kProfiles = makeBuiltins();
  return kProfiles;
}

std::optional<Profile> findProfile(std::string_view name) {
  for (const Profile& p : builtinProfiles()) {
    if (p.name == name) return p;
  }
  return std::nullopt;
}

std::string profileNames() {
  std::vector<std::string> names;
  for (const Profile& p : builtinProfiles()) names.push_back(p.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

Profile parseProfile(std::string_view text, std::string_view fileName) {
  Profile profile;
  profile.name = "custom";
  profile.source = std::string(fileName);
  Parser parser(fileName, profile);
  if (text.size() > kMaxFileBytes)
    throw core::UsageError(fmt::format("{}: larger than {} KiB; a profile is a few lines", shown(fileName, 256),
                                       kMaxFileBytes / 1024));
  int lineNo = 0;
  bool first = true;
  while (!text.empty()) {
    ++lineNo;
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.size() > kMaxLineBytes) parser.fail(lineNo, fmt::format("line longer than {} bytes", kMaxLineBytes));
    if (const std::size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = trimmed(line);
    if (line.empty()) continue;
    if (std::any_of(line.begin(), line.end(), [](char c) {
          const auto u = static_cast<unsigned char>(c);
          return u < 0x20 && c != '\t';
        }))
      parser.fail(lineNo, "control character in the line");
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) parser.fail(lineNo, fmt::format("expected key = value, got '{}'", shown(line)));
    const std::string_view key = trimmed(line.substr(0, eq));
    const std::string_view value = trimmed(line.substr(eq + 1));
    if (key.empty()) parser.fail(lineNo, "no key before '='");
    if (value.empty()) parser.fail(lineNo, fmt::format("{} has no value", shown(key)));
    parser.set(lineNo, key, value, first);
    first = false;
  }
  if (!profile.requiresSomething())
    throw core::UsageError(fmt::format("{}: the profile states no requirement", shown(fileName, 256)));
  return profile;
}

Profile readProfileFile(const std::string& path) {
  return parseProfile(core::readUserFile(path, "profile file", kMaxFileBytes), path);
}

}  // namespace fabricmap::orchestrator
