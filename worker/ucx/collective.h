// The ucx backend has no collectives: UCP is point-to-point (UCC would be the collective layer
// above it). Every collective step is waived with this reason.
#pragma once

#include <string>

namespace fabricmap::worker::ucx {

std::string collectiveWaiver();

}  // namespace fabricmap::worker::ucx
