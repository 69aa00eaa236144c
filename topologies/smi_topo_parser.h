// Reads saved `nvidia-smi topo -m` output into a GpuTopology, so nodes can be judged from the text
// users paste into tickets and issue trackers, not only from a live driver.
#pragma once

#include <string>
#include <string_view>

#include "topologies/gpu_topology.h"

namespace fabricmap::topologies {

// Parses the matrix of `nvidia-smi topo -m` and what follows it (the NIC Legend). Accepts tabs or
// spaces, GPUn and NICn/mlx5_N rows and columns, the optional CPU Affinity / NUMA Affinity /
// GPU NUMA ID columns, ANSI escape codes, text before the header and after the matrix, a missing
// legend and a 1-GPU matrix. The result's source is kNvidiaSmiText and its nvswitch kUnknown
// (the text cannot say; classify() infers it from link counts).
// Throws core::UsageError with one message naming `origin`, the line and the problem when the text
// holds no matrix or a malformed one.
GpuTopology parseSmiTopo(std::string_view text, std::string_view origin = "input");

// Reads and parses a file; a missing or unreadable file is a core::UsageError too.
GpuTopology readSmiTopoFile(const std::string& path);

// `text` without ANSI escape sequences (CSI "ESC [ ... final" and two-byte escapes) and without
// carriage returns.
std::string stripAnsi(std::string_view text);

}  // namespace fabricmap::topologies
