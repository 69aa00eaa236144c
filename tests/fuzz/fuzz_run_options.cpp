// Fuzz target: `fabricmap run` arguments (one per line of the input), as every rank parses them:
// sizes with suffixes, lists, fault specifications, the resume checks, a --nic-per-rank list
// resolved against a small two-node topology. Bad arguments must be a UsageError, never a crash.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "orchestrator/run/nic_pinning.h"
#include "orchestrator/run/run_config.h"

namespace {

// Two nodes of two ranks: node 0 with an RDMA port per GPU, node 1 with an interface only.
fabricmap::core::Topology twoNodes() {
  fabricmap::core::Topology t;
  for (int r = 0; r < 4; ++r) {
    fabricmap::core::RankRecord rank;
    rank.rank = r;
    rank.node = r / 2;
    rank.localRank = r % 2;
    t.ranks.push_back(rank);
  }
  t.ranks[0].nic = "mlx5_0";
  t.ranks[1].nic = "mlx5_1";
  t.nodes.resize(2);
  t.nodes[1].node = 1;
  for (const char* device : {"mlx5_0", "mlx5_1"}) {
    fabricmap::core::NicRecord n;
    n.device = device;
    n.port = 1;
    n.kind = "rdma";
    n.state = "ACTIVE";
    t.inventory.nics.push_back(n);
  }
  fabricmap::core::NicRecord eth;
  eth.node = 1;
  eth.device = "eth0";
  eth.kind = "ethernet";
  eth.state = "up";
  t.inventory.nics.push_back(eth);
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace orch = fabricmap::orchestrator;
  std::vector<std::string> args(1);
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') {
      args.emplace_back();
    } else {
      args.back() += static_cast<char>(data[i]);
    }
  }
  try {
    const orch::ParsedRun parsed = orch::parseRunOptions(args);
    (void)orch::toJsonString(parsed.config);
    (void)orch::measurementDifferences(parsed.config, orch::parseRunOptions({}).config);
    orch::RunConfig nccl = parsed.config;
    orch::applyBackendDefaults(nccl, "nccl");
    static const fabricmap::core::Topology kTopology = twoNodes();
    for (const auto& nic : orch::pinNics(kTopology, parsed.config.nicPerRank)) (void)nic.name();
  } catch (const fabricmap::core::UsageError&) {
  }
  return 0;
}
