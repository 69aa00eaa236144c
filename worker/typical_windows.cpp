#include "worker/typical_windows.h"

#include <algorithm>

#include "worker/mpi_check.h"

namespace fabricmap::worker {

void TypicalWindows::agree(MPI_Comm world, const std::array<Sample, 2>& mine) {
  int rank = 0;
  int size = 0;
  FM_MPI(MPI_Comm_rank(world, &rank));
  FM_MPI(MPI_Comm_size(world, &size));
  std::vector<Sample> all(rank == 0 ? mine.size() * static_cast<std::size_t>(size) : 0);
  const int bytes = static_cast<int>(sizeof(mine));
  FM_MPI(MPI_Gather(mine.data(), bytes, MPI_BYTE, all.data(), bytes, MPI_BYTE, 0, world));
  agreeGathered(world, std::move(all));
}

void TypicalWindows::agreeGathered(MPI_Comm world, std::vector<Sample> all) {
  // each kind's median window, then its median probe (0: none seen)
  std::array<double, 2 * kKinds> typical{};
  std::array<std::vector<double>, 2 * kKinds> seen;
  for (const Sample& s : all) {
    if (s.kind < 0 || s.kind >= static_cast<int>(kKinds)) continue;  // none
    const auto k = static_cast<std::size_t>(s.kind);
    if (s.window > 0) seen[k].push_back(s.window);
    if (s.probe > 0) seen[kKinds + k].push_back(s.probe);
  }
  for (std::size_t k = 0; k < typical.size(); ++k) {
    auto& v = seen[k];
    if (v.empty()) continue;
    const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
    std::nth_element(v.begin(), mid, v.end());
    typical[k] = *mid;
  }
  FM_MPI(MPI_Bcast(typical.data(), static_cast<int>(typical.size()), MPI_DOUBLE, 0, world));
  for (std::size_t k = 0; k < kKinds; ++k) {  // WindowHistory skips the zeros
    windows_[k].add(typical[k]);
    probes_[k].add(typical[kKinds + k]);
  }
}

}  // namespace fabricmap::worker
