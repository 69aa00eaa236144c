// The reference for fabricmap's harness overhead: a bare MPI_Allreduce loop, timed the way
// fabricmap reports it (slowest rank's total time / iterations, nccl-tests' -a 3).
// usage: mpirun -np N bare_allreduce BYTES ITERS WARMUP   -> prints the time per op in us
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc != 4) {
    std::fprintf(stderr, "usage: bare_allreduce BYTES ITERS WARMUP\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const long bytes = std::atol(argv[1]);
  const int iters = std::atoi(argv[2]);
  const int warmup = std::atoi(argv[3]);
  const int count = static_cast<int>(bytes / static_cast<long>(sizeof(float)));
  // page-aligned and touched like fabricmap's buffers, so only the harness differs
  const std::size_t size = (static_cast<std::size_t>(count) * sizeof(float) + 4095) / 4096 * 4096 + 4096;
  auto* in = static_cast<float*>(std::aligned_alloc(4096, size));
  auto* out = static_cast<float*>(std::aligned_alloc(4096, size));
  for (int i = 0; i < count; ++i) in[i] = 1.0f;
  std::memset(out, 0, size);
  for (int i = 0; i < warmup; ++i) {
    MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int i = 0; i < iters; ++i) {
    MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  }
  double perOp = (MPI_Wtime() - start) / iters;
  double slowest = 0;
  MPI_Reduce(&perOp, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::printf("%.3f\n", slowest * 1e6);
  std::free(in);
  std::free(out);
  MPI_Finalize();
  return 0;
}
