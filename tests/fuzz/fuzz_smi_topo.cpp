// Fuzz target: saved `nvidia-smi topo -m` text, as `fabricmap topo --file` reads it: parsed,
// classified and described. A malformed matrix must be a UsageError, never a crash or a hang.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/error.h"
#include "topologies/classify.h"
#include "topologies/node_records.h"
#include "topologies/smi_topo_parser.h"
#include "topologies/topology_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace topo = fabricmap::topologies;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const topo::GpuTopology t = topo::parseSmiTopo(text, "fuzz");
    const topo::Classification c = topo::classify(t);
    // as `fabricmap topo --json` and a run's node description print them
    constexpr auto kReplace = nlohmann::json::error_handler_t::replace;
    (void)topo::topologyToJson(t, c).dump(2, ' ', false, kReplace);
    (void)topo::describeNode(t, c).dump(-1, ' ', false, kReplace);
  } catch (const fabricmap::core::UsageError&) {
    // the documented answer to bad input
  }
  return 0;
}
