// One node's inventory (/inventory, core::InventoryRows) in a few words, for the console, `show`
// and the report: plain text (the report escapes it). Formatting only.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/records.h"

namespace fabricmap::results {

// "8x 400 Gb/s IB (NDR)", one group per rate, then the ports not active ("mlx5_2 port 1 DOWN");
// "none" without any.
std::string nicsSummary(const core::Topology& topology, int node);
// "9 at their maximum; GPU 0000:18:00.0: x8 16 GT/s of x16 32"
std::string pcieSummary(const core::Topology& topology, int node);
// "8x 80 GiB NVIDIA H100 80GB HBM3; ECC on; GPU 3: remap pending" (every GPU of /inventory/gpus, else
// each rank's GPU once; then what NVML said of their memory's health; "-" when nothing is known)
std::string gpuMemorySummary(const core::Topology& topology, int node);
// "rank 3 away from their GPU; 7 near their GPU": the ranks' near_gpu/near_nic; "-" when unknown
std::string bindingSummary(const core::Topology& topology, int node);
// "+9 (96 counters)": the error counters' growth during the run; "-" when none were read
std::string countersSummary(const core::Topology& topology, int node);
// Each distinct way the backend's library reached peers (/inventory/endpoints), in the order first
// met, with the ranks that used it: {"0-3", "tcp/eth0 (am, am_bw, rma_bw); tag rendezvous from 8192 B"}
std::vector<std::pair<std::string, std::string>> endpointWays(const std::vector<core::EndpointRecord>& endpoints);
// "NICs 8x 400 Gb/s IB (NDR), GPUDirect yes": the line the console prints per node
std::string inventoryLine(const core::Topology& topology, int node);

}  // namespace fabricmap::results
