// Small helpers of the record types.
#include "core/records.h"

#include <array>
#include <limits>

namespace fabricmap::core {

std::string_view name(LinkClass c) {
  static constexpr std::array<std::string_view, 6> kNames{"self", "nvswitch", "nvlink", "pcie",
                                                          "same_node_host", "inter_node"};
  return kNames[static_cast<std::size_t>(c)];
}

int NodeRecord::gpuLinkCount() const {
  int g = 0;
  while (static_cast<std::size_t>(g) * static_cast<std::size_t>(g) < gpuLinks.size()) ++g;
  return g;
}

Matrix nanMatrix(int n) {
  Matrix m;
  m.n = n;
  m.values.assign(static_cast<std::size_t>(n) * static_cast<std::size_t>(n),
                  std::numeric_limits<float>::quiet_NaN());
  return m;
}

}  // namespace fabricmap::core
