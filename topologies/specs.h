// Reference figures per GPU model, PCIe generation and NIC rate: the peaks a measurement is judged
// against ("is 380 GB/s normal for an H100 pair?") and the link counts classification relies on.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace fabricmap::topologies {

// The most NVLinks any GPU has (H100/H200/B200: 18). classify() uses it as the bound when a
// node's GPU model is unknown: per-pair counts summing past it can only come from an NVSwitch.
inline constexpr int kMaxNvLinksPerGpu = 18;

struct GpuSpec {
  std::string_view model;     // "H100 SXM", "A100 PCIe 80GB", ...
  int nvlinkGeneration = 0;   // 0: no NVLink
  int nvlinksPerGpu = 0;      // NVLinks of one GPU (to an NVSwitch, peers or a bridge)
  double nvlinkGBps = 0;      // peak NVLink bandwidth of one GPU, one direction, GB/s (1e9 B/s)
  int pcieGeneration = 0;     // host interface; 0 when the host link is NVLink-C2C (GH200, GB200)
  double memoryGBps = 0;      // peak device memory bandwidth, GB/s
  bool nvlinkBridge = false;  // NVLink only through a bridge to one partner card (PCIe boards)
  int memoryGB = 0;           // device memory as the vendor names it (80 for "H100 80GB": GiB, as NVML counts it)
};

// The spec of the GPU an NVML / nvidia-smi device name names ("NVIDIA H100 80GB HBM3",
// "NVIDIA A100-SXM4-80GB", "NVIDIA GeForce RTX 4090", "Tesla V100-SXM2-32GB"); nullopt for a name
// it does not know. Matching is by whole words, so "H20" never matches "H200", "A10" never "A100".
std::optional<GpuSpec> gpuSpecForName(std::string_view deviceName);

// A GPU's memory in bytes as its device name tells it ("A100-SXM4-40GB": 40 GiB, "H100 80GB HBM3":
// 80 GiB, "NVIDIA H200": its model's 141 GiB), for files that carry names but no NVML figure (an
// nccl-tests log). Nothing for an unknown model, and for a superchip (Grace Hopper, Grace
// Blackwell: "GH200 120GB", "GH200 480GB"), whose name counts the CPU's memory too.
std::optional<std::uint64_t> gpuMemoryFromName(std::string_view deviceName);

// Every model known, in lookup order.
const std::vector<GpuSpec>& gpuSpecs();

// Peak PCIe x16 bandwidth, one direction, GB/s, per generation 1-6 (Gen3 16, Gen4 32, Gen5 64);
// nullopt for other generations.
std::optional<double> pcieX16GBps(int generation);

// A NIC's line rate in GB/s from its rate in Gb/s (100G = 12.5 GB/s).
double nicGBps(double rateGbps);

// The InfiniBand name of a 4x port rate ("EDR" 100, "HDR" 200, "NDR" 400, "XDR" 800); empty for
// other rates.
std::string_view infinibandRateName(double rateGbps);

}  // namespace fabricmap::topologies
