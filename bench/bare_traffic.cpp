// The reference for fabricmap's training pattern: tensor-parallel and data-parallel all_reduces
// written as a bare MPI program, timed the way fabricmap reports them (each training step starts
// after a barrier; a type's time is when its last message completed; slowest rank per step; the
// median over steps).
//
//   isolated:   each type alone, as a blocking MPI_Allreduce loop (what a hand-written test does)
//   concurrent: both types at once, each keeping one MPI_Iallreduce in flight on its own
//               communicator, the main thread testing them in turn
//
// Ranks in Megatron-LM order: TP groups are TP consecutive ranks, DP groups take one rank of each.
// usage: mpirun -np N bare_traffic TP TP_BYTES TP_MSGS DP_BYTES DP_MSGS STEPS WARMUP
//   -> "tp_isolated_us dp_isolated_us tp_concurrent_us dp_concurrent_us" (medians, rank 0)
// Elements are 16-bit (MPI_INT16_T, as fabricmap moves bfloat16 when it does not check the data).
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

struct Type {
  MPI_Comm comm = MPI_COMM_NULL;
  int count = 0;  // elements per message
  int messages = 0;
  std::int16_t* in = nullptr;
  std::int16_t* out = nullptr;
  // progress of a concurrent step
  int sent = 0;
  MPI_Request request = MPI_REQUEST_NULL;
};

std::int16_t* pageAligned(int count) {
  const std::size_t size = (static_cast<std::size_t>(count) * 2 + 4095) / 4096 * 4096 + 4096;
  auto* p = static_cast<std::int16_t*>(std::aligned_alloc(4096, size));
  std::memset(p, 0, size);
  return p;
}

double isolated(Type& t) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int m = 0; m < t.messages; ++m) MPI_Allreduce(t.in, t.out, t.count, MPI_INT16_T, MPI_SUM, t.comm);
  return MPI_Wtime() - start;
}

std::array<double, 2> concurrent(std::array<Type, 2>& types) {
  std::array<double, 2> seconds{0, 0};
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  int running = 0;
  for (Type& t : types) {
    t.sent = 1;
    MPI_Iallreduce(t.in, t.out, t.count, MPI_INT16_T, MPI_SUM, t.comm, &t.request);
    ++running;
  }
  while (running > 0) {
    for (std::size_t i = 0; i < types.size(); ++i) {
      Type& t = types[i];
      if (t.request == MPI_REQUEST_NULL) continue;
      int done = 0;
      MPI_Test(&t.request, &done, MPI_STATUS_IGNORE);
      if (!done) continue;
      if (t.sent < t.messages) {
        ++t.sent;
        MPI_Iallreduce(t.in, t.out, t.count, MPI_INT16_T, MPI_SUM, t.comm, &t.request);
      } else {
        seconds[i] = MPI_Wtime() - start;
        --running;
      }
    }
  }
  return seconds;
}

// The slowest rank's time of each step on rank 0, then its median.
double medianOfSlowest(const std::vector<double>& mine) {
  std::vector<double> slowest(mine.size());
  MPI_Reduce(mine.data(), slowest.data(), static_cast<int>(mine.size()), MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  std::sort(slowest.begin(), slowest.end());
  const std::size_t n = slowest.size();
  return n % 2 == 1 ? slowest[n / 2] : 0.5 * (slowest[n / 2 - 1] + slowest[n / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int tp = argc == 8 ? std::atoi(argv[1]) : 0;
  if (argc != 8 || tp < 1 || size % tp != 0) {
    if (rank == 0) std::fprintf(stderr, "usage: bare_traffic TP TP_BYTES TP_MSGS DP_BYTES DP_MSGS STEPS WARMUP\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  std::array<Type, 2> types;
  MPI_Comm_split(MPI_COMM_WORLD, rank / tp, rank, &types[0].comm);  // TP: consecutive ranks
  MPI_Comm_split(MPI_COMM_WORLD, rank % tp, rank, &types[1].comm);  // DP: across the TP groups
  for (int i = 0; i < 2; ++i) {
    types[static_cast<std::size_t>(i)].count = static_cast<int>(std::atol(argv[2 + 2 * i]) / 2);
    types[static_cast<std::size_t>(i)].messages = std::atoi(argv[3 + 2 * i]);
  }
  const int steps = std::atoi(argv[6]);
  const int warmup = std::atoi(argv[7]);
  for (Type& t : types) {
    t.in = pageAligned(t.count);
    t.out = pageAligned(t.count);
  }

  std::array<double, 4> medians{};
  for (std::size_t i = 0; i < 2; ++i) {
    for (int w = 0; w < warmup; ++w) isolated(types[i]);
    std::vector<double> mine(static_cast<std::size_t>(steps));
    for (double& s : mine) s = isolated(types[i]);
    medians[i] = medianOfSlowest(mine);
  }
  for (int w = 0; w < warmup; ++w) concurrent(types);
  std::array<std::vector<double>, 2> mine{std::vector<double>(static_cast<std::size_t>(steps)),
                                          std::vector<double>(static_cast<std::size_t>(steps))};
  for (std::size_t s = 0; s < static_cast<std::size_t>(steps); ++s) {
    const auto t = concurrent(types);
    mine[0][s] = t[0];
    mine[1][s] = t[1];
  }
  medians[2] = medianOfSlowest(mine[0]);
  medians[3] = medianOfSlowest(mine[1]);
  if (rank == 0) std::printf("%.1f %.1f %.1f %.1f\n", medians[0] * 1e6, medians[1] * 1e6, medians[2] * 1e6, medians[3] * 1e6);
  for (Type& t : types) {
    std::free(t.in);
    std::free(t.out);
    MPI_Comm_free(&t.comm);
  }
  MPI_Finalize();
  return 0;
}
