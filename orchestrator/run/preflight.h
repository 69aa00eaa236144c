// The preflight (`fabricmap run --preflight`, and the part of it every run does): before anything
// is measured, every rank must run the same fabricmap, see the GPUs the run expects, and rank 0
// must be able to write the results. Pure: decided from every rank's probe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/records.h"
#include "orchestrator/run/run_config.h"

namespace fabricmap::orchestrator {

// Ranks that run another fabricmap than rank 0 (a stale binary on some node): one line per
// distinct build, naming its ranks and hosts; empty when all agree. Every run refuses to start
// on these (ranks of different builds may not even agree on the plan).
std::vector<std::string> versionProblems(const std::vector<core::HostProbe>& probes, const core::Topology& topology);

// What the GPUs would not carry: a node whose ranks see different GPU counts, a node that sees
// fewer than the others, fewer GPUs than --gpus-per-node, or (a GPU backend) fewer GPUs than ranks.
std::vector<std::string> gpuProblems(const std::vector<core::HostProbe>& probes, const core::Topology& topology,
                                     const RunConfig& config, std::string_view backend);

// The preflight table rank 0 prints: per node its host, ranks, GPUs seen and the build its ranks
// run; then each problem, and the verdict line.
std::string preflightReport(const std::vector<core::HostProbe>& probes, const core::Topology& topology,
                            const std::vector<std::string>& problems);

}  // namespace fabricmap::orchestrator
