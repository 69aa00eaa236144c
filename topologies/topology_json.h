// The JSON form of a classified node (`fabricmap topo --json`), documented in topologies/README.md.
#pragma once

#include <nlohmann/json.hpp>

#include "topologies/classify.h"
#include "topologies/gpu_topology.h"

namespace fabricmap::topologies {

// Schema name and version in the object's "schema" key; bump the number on an incompatible change.
inline constexpr const char* kTopologyJsonSchema = "fabricmap.topo/1";

// Every key is always present (unknown values are null), so consumers never test for absence.
nlohmann::ordered_json topologyToJson(const GpuTopology& topo,
                                      const Classification& classification);

}  // namespace fabricmap::topologies
