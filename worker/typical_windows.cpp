#include "worker/typical_windows.h"

#include <algorithm>
#include <vector>

#include "worker/mpi_check.h"

namespace fabricmap::worker {
namespace {

constexpr std::size_t kFields = 3;  // a sample on the wire: kind, window, probe (doubles)

// The median of `v` (reordered); 0 when empty.
double medianOf(std::vector<double>& v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

}  // namespace

void TypicalWindows::agree(MPI_Comm world, const std::array<Sample, 2>& mine) {
  std::array<double, 2 * kFields> wire{};
  for (std::size_t i = 0; i < mine.size(); ++i) {
    wire[kFields * i] = mine[i].kind;
    wire[kFields * i + 1] = mine[i].window;
    wire[kFields * i + 2] = mine[i].probe;
  }
  int rank = 0;
  int size = 0;
  FM_MPI(MPI_Comm_rank(world, &rank));
  FM_MPI(MPI_Comm_size(world, &size));
  std::vector<double> all(rank == 0 ? wire.size() * static_cast<std::size_t>(size) : 0);
  FM_MPI(MPI_Gather(wire.data(), static_cast<int>(wire.size()), MPI_DOUBLE, all.data(), static_cast<int>(wire.size()),
                    MPI_DOUBLE, 0, world));
  std::array<double, 2 * kKinds> typical{};  // windows, then probes
  if (rank == 0) {
    std::array<std::vector<double>, 2 * kKinds> seen;
    for (std::size_t i = 0; i + kFields <= all.size(); i += kFields) {
      const double kind = all[i];
      if (!(kind >= 0 && kind < static_cast<double>(kKinds))) continue;  // none
      const auto k = static_cast<std::size_t>(kind);
      if (all[i + 1] > 0) seen[k].push_back(all[i + 1]);
      if (all[i + 2] > 0) seen[kKinds + k].push_back(all[i + 2]);
    }
    for (std::size_t k = 0; k < typical.size(); ++k) typical[k] = medianOf(seen[k]);
  }
  FM_MPI(MPI_Bcast(typical.data(), static_cast<int>(typical.size()), MPI_DOUBLE, 0, world));
  for (std::size_t k = 0; k < kKinds; ++k) {  // WindowHistory skips the zeros
    windows_[k].add(typical[k]);
    probes_[k].add(typical[kKinds + k]);
  }
}

}  // namespace fabricmap::worker
