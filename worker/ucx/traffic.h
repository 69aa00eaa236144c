// The ucx backend has no training traffic: the pattern's types are collectives (its BackendInfo
// says so, and a run with --patterns or --scaling on it is refused before it starts).
#pragma once

#include <string>

namespace fabricmap::worker::ucx {

std::string trafficRefusal();

}  // namespace fabricmap::worker::ucx
