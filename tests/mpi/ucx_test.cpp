// The ucx backend under mpiexec -n 2, 3 and 4: UCP streams, ping-pongs and checked transfers by tag
// matching and by remote writes between every pair of ranks (one pair at a time), every collective
// waived, and a UCX that cannot start refused the same way on every rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/error.h"
#include "tests/common/backend_checks.h"
#include "worker/ucx/backend.h"
#include "worker/ucx/context.h"

namespace fabricmap::worker {
namespace {

int worldRank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int worldSize() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}


BackendContext contextFor(PairApi api) {
  BackendContext context;
  context.pairApi = api;
  return context;
}

// Every pair conforms (tests/common/backend_checks) at eager and rendezvous sizes, an odd length,
// a window of one and of osu_bw's 64.
void everyPairStreamsAndArrivesExact(PairApi api) {
  std::unique_ptr<Backend> backend = ucx::createBackend(contextFor(api));
  EXPECT_EQ(test_support::checkEveryPair(*backend), 0u);
}

TEST(UcxPairs, EveryPairStreamsAndArrivesExactByTagMatching) { everyPairStreamsAndArrivesExact(PairApi::kTag); }

TEST(UcxPairs, EveryPairStreamsAndArrivesExactByRemoteWrites) { everyPairStreamsAndArrivesExact(PairApi::kRma); }

// Remote writes and tag messages interleave on one runner, and a second runner (new buffers,
// registered anew) works after the first is gone: the keys are exchanged per runner.
TEST(UcxPairs, RemoteWritesSurviveANewRunnerPerSize) {
  std::unique_ptr<Backend> backend = ucx::createBackend(contextFor(PairApi::kRma));
  const int n = worldSize();
  const int me = worldRank();
  std::uint64_t wrong = 0;
  for (std::uint64_t bytes : {std::uint64_t{4096}, std::uint64_t{1} << 20, std::uint64_t{64}}) {
    std::unique_ptr<PairRunner> pairs = backend->preparePairs(MPI_COMM_WORLD, test_support::conformanceSpec(bytes, 2));
    const int peer = me ^ 1;
    if (peer < n) {
      const bool low = me < peer;
      wrong += pairs->checkedTransfer(peer, low);
      EXPECT_GT(pairs->stream(peer, low, !low).seconds, 0);
      wrong += pairs->checkedTransfer(peer, !low);
    }
  }
  EXPECT_EQ(test_support::sumOverRanks(wrong), 0u);
}

TEST(UcxPairs, EveryCollectiveIsWaived) {
  std::unique_ptr<Backend> backend = ucx::createBackend({});
  EXPECT_EQ(backend->name(), "ucx");
  EXPECT_TRUE(backend->copyMethods().empty());
  const test_support::CheckedCases cases =
      test_support::checkEveryCollective(*backend, {core::DType::kFloat, core::DType::kInt32});
  EXPECT_EQ(cases.run, 0);
  EXPECT_GT(cases.waived, 0);
  EXPECT_NE(backend->waiver({}).find("UCX (UCP) has no collectives"), std::string::npos);
}

// ucp_ep_print_info's text as UCX 1.13 prints it, in a line: lanes in order with their uses, the
// path index dropped, then where tag sends switch to rendezvous.
TEST(UcxEndpoints, APrintedEndpointIsSummarizedInALine) {
  const std::string sharedMemory =
      "#\n# UCP endpoint \n#\n#               peer: <no debug data>\n"
      "#                 lane[0]:  0:self/memory0.0 md[0]          -> md[0]/self/sysdev[255] am am_bw#0\n"
      "#                 lane[1]:  5:cma/memory.0 md[4]            -> md[4]/cma/sysdev[255] rma_bw#0\n#\n"
      "#                tag_send: 0..<egr/short>..8185..<egr/bcopy>..8192..<rndv>..(inf)\n"
      "#            tag_send_nbr: 0..<egr/short>..8185..<egr/bcopy>..262144..<rndv>..(inf)\n#\n"
      "#                  rma_bw: mds rndv_rkey_size 9\n#\n";
  EXPECT_EQ(ucx::summarizeEndpoint(sharedMemory),
            "self/memory0 (am, am_bw); cma/memory (rma_bw); tag rendezvous from 8192 B");
  const std::string overTcp =
      "#                 lane[0]:  1:tcp/eth0.0 md[1]              -> md[1]/tcp/sysdev[255] rma_bw#0 am am_bw#0 wireup\n"
      "#                 lane[1]:  2:tcp/eth1.0 md[1]              -> md[1]/tcp/sysdev[255] rma_bw#1 am_bw#1\n"
      "#                tag_send: 0..<egr/short>..8185..<egr/bcopy>..16384..<rndv>..(inf)\n";
  EXPECT_EQ(ucx::summarizeEndpoint(overTcp),
            "tcp/eth0 (rma_bw, am, am_bw, wireup); tcp/eth1 (rma_bw, am_bw); tag rendezvous from 16384 B");
  const std::string infiniband =
      "#                 lane[0]:  8:rc_mlx5/mlx5_0:1.0 md[4]      -> md[4]/ib/sysdev[3] rma_bw#0 am\n";
  EXPECT_EQ(ucx::summarizeEndpoint(infiniband), "rc_mlx5/mlx5_0:1 (rma_bw, am)");
  EXPECT_EQ(ucx::summarizeEndpoint("# UCP endpoint\n#   peer: <no debug data>\n"), "");
  EXPECT_EQ(ucx::summarizeEndpoint(""), "");
}

// How an endpoint can move GPU memory, from its lanes and the domains that register CUDA memory.
TEST(UcxEndpoints, CudaPathIsIpcThenGpuDirectOnABandwidthLaneElseStaged) {
  const std::vector<std::string> gdr = {"mlx5_0", "cuda_cpy", "cuda_ipc"};
  EXPECT_EQ(ucx::cudaPathOf("rc_mlx5/mlx5_0:1 (rma_bw, am, am_bw); tag rendezvous from 8192 B", gdr),
            "GPUDirect RDMA on mlx5_0");
  EXPECT_EQ(ucx::cudaPathOf("rc_mlx5/mlx5_1:1 (rma_bw, am_bw)", gdr), "staged through host memory");  // not mlx5_1
  EXPECT_EQ(ucx::cudaPathOf("rc_mlx5/mlx5_0:1 (am, wireup)", gdr), "staged through host memory");     // no bw lane
  EXPECT_EQ(ucx::cudaPathOf("rc_mlx5/mlx5_0:1 (rma_bw, am_bw)", {"cuda_cpy"}), "staged through host memory");
  EXPECT_EQ(ucx::cudaPathOf("posix/memory (am, am_bw); cuda_ipc/cuda (rma_bw)", gdr), "CUDA IPC");
  EXPECT_EQ(ucx::cudaPathOf("tcp/eth0 (rma_bw, am, am_bw, wireup)", gdr), "staged through host memory");
  EXPECT_EQ(ucx::cudaPathOf("", gdr), "staged through host memory");
  // on this host's UCX: the transports that reach the network register no CUDA memory
  for (const std::string& domain : ucx::cudaRegisteringDomains()) {
    EXPECT_NE(domain, "tcp");
    EXPECT_NE(domain, "self");
  }
}

// GPU memory asked of a UCX that cannot move it (no CUDA in it, as Debian's): every rank refuses
// with the same message naming what it can move; a UCX that can goes on (needs a GPU here, so
// not measured in this test).
TEST(UcxPairs, CudaMemoryFromAUcxWithoutCudaIsOneUsageErrorOnEveryRank) {
  std::string message;
  try {
    ucx::Ucp ucp(MPI_COMM_WORLD, {.rma = false, .cudaMemory = true, .netDevices = {}});
  } catch (const core::UsageError& e) {
    message = e.what();
  }
  int refused = message.empty() ? 0 : 1;
  int everywhere = 0;
  MPI_Allreduce(&refused, &everywhere, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (everywhere == 0) GTEST_SKIP() << "this UCX moves CUDA memory";
  EXPECT_EQ(everywhere, worldSize());
  EXPECT_NE(message.find("UCX cannot start on rank 0: this UCX (" + ucx::versionString() + ") moves host memory only"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("--pair-memory cuda needs a UCX built with CUDA"), std::string::npos) << message;
  const int length = static_cast<int>(message.size());
  int longest = 0;
  MPI_Allreduce(&length, &longest, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(length, longest);
}

// The backend names the peers it reached and how: every pair met, each over something UCX printed.
TEST(UcxEndpoints, EveryPeerMetHasItsPath) {
  std::unique_ptr<Backend> backend = ucx::createBackend({});
  std::unique_ptr<PairRunner> pairs = backend->preparePairs(MPI_COMM_WORLD, test_support::conformanceSpec(64, 1));
  const int n = worldSize();
  const int me = worldRank();
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      MPI_Barrier(MPI_COMM_WORLD);
      if (me == a || me == b) (void)pairs->checkedTransfer(me == a ? b : a, me == a);
    }
  }
  const std::vector<EndpointPath> paths = backend->endpointPaths();
  ASSERT_EQ(static_cast<int>(paths.size()), n - 1);
  for (const EndpointPath& p : paths) {
    EXPECT_NE(p.peer, me);
    EXPECT_NE(p.transports.find(" ("), std::string::npos) << "rank " << me << " -> " << p.peer << ": " << p.transports;
  }
}

// An unknown transport everywhere: every rank refuses with the same message, none hangs.
TEST(UcxPairs, AUcxThatCannotStartIsOneUsageErrorOnEveryRank) {
  const char* saved = std::getenv("UCX_TLS");
  const std::string keep = saved != nullptr ? saved : "";
  setenv("UCX_TLS", "no_such_transport", 1);
  std::string message;
  try {
    (void)ucx::createBackend({});
  } catch (const core::UsageError& e) {
    message = e.what();
  }
  if (saved != nullptr) setenv("UCX_TLS", keep.c_str(), 1);
  else unsetenv("UCX_TLS");
  EXPECT_NE(message.find("UCX cannot start on rank 0: ucp_init"), std::string::npos) << message;
  EXPECT_NE(message.find("no_such_transport"), std::string::npos) << message;  // UCX's own reason, kept
  // the same text on every rank
  const int length = static_cast<int>(message.size());
  int longest = 0;
  MPI_Allreduce(&length, &longest, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(length, longest);
  // and UCX starts again afterwards
  EXPECT_NO_THROW((void)ucx::createBackend({}));
}

}  // namespace
}  // namespace fabricmap::worker
