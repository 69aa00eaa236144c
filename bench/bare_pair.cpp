// The MPI-level reference for fabricmap's pairwise figures: osu_bw's stream (a window of
// non-blocking sends per iteration, the receiver's 4-byte acknowledgement after each window) and an
// osu_latency-style ping-pong between ranks 0 and 1, with nothing else around them.
// usage: mpirun -np 2 bare_pair BYTES WINDOW ITERS LAT_ITERS   -> "GB/s one-way-latency-us"
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc != 5) {
    std::fprintf(stderr, "usage: bare_pair BYTES WINDOW ITERS LAT_ITERS\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int bytes = std::atoi(argv[1]);
  const int window = std::atoi(argv[2]);
  const int iters = std::atoi(argv[3]);
  const int latIters = std::atoi(argv[4]);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int peer = 1 - rank;
  const std::size_t size = (static_cast<std::size_t>(bytes) + 4095) / 4096 * 4096;
  auto* buf = static_cast<char*>(std::aligned_alloc(4096, size));
  std::memset(buf, 1, size);
  std::vector<MPI_Request> req(static_cast<std::size_t>(window));
  const auto stream = [&](int n) {
    for (int i = 0; i < n; ++i) {
      for (int w = 0; w < window; ++w) {
        if (rank == 0) {
          MPI_Isend(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &req[static_cast<std::size_t>(w)]);
        } else {
          MPI_Irecv(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &req[static_cast<std::size_t>(w)]);
        }
      }
      MPI_Waitall(window, req.data(), MPI_STATUSES_IGNORE);
      char ack[4] = {};
      if (rank == 0) {
        MPI_Recv(ack, 4, MPI_CHAR, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Send(ack, 4, MPI_CHAR, peer, 2, MPI_COMM_WORLD);
      }
    }
  };
  stream(1);  // warm-up
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  stream(iters);
  const double bw = static_cast<double>(bytes) * window * iters / (MPI_Wtime() - start) / 1e9;

  const int warmup = 100;  // osu_latency's skip for small messages
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < warmup + latIters; ++i) {
    if (i == warmup) start = MPI_Wtime();
    if (rank == 0) {
      MPI_Send(buf, 8, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
      MPI_Recv(buf, 8, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf, 8, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, 8, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
    }
  }
  const double latency = (MPI_Wtime() - start) / (2.0 * latIters) * 1e6;
  if (rank == 0) std::printf("%.4f %.4f\n", bw, latency);
  std::free(buf);
  MPI_Finalize();
  return 0;
}
