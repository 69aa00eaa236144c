// GPU tests: the CUDA kernels and the NCCL backend on a real device. Labelled `gpu` in CTest; every
// test skips itself where no GPU is visible (as on the build machines), so CI only compiles them.
// Run under mpiexec with one rank per GPU (scripts/gpu-check.sh does).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <vector>

#include "core/pattern_for.h"
#include "kernels/copy.h"
#include "kernels/patterns.h"
#include "tests/common/backend_checks.h"
#include "worker/backend.h"
#include "worker/host_check.h"
#include "worker/nccl/backend.h"

namespace fabricmap {
namespace {

bool haveGpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

#define SKIP_WITHOUT_GPU() \
  if (!haveGpu()) GTEST_SKIP() << "no GPU visible"

int localRank() {
  MPI_Comm shared = MPI_COMM_NULL;
  int rank = 0;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
  MPI_Comm_rank(shared, &rank);
  MPI_Comm_free(&shared);
  return rank;
}

void bindDevice() {
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(localRank() % count), cudaSuccess);
}

struct DeviceMemory {
  void* ptr = nullptr;
  explicit DeviceMemory(std::size_t bytes) { EXPECT_EQ(cudaMalloc(&ptr, bytes), cudaSuccess); }
  ~DeviceMemory() { cudaFree(ptr); }
};

// The device fill writes what the host fill writes, and the device check counts exactly.
TEST(Kernels, FillAndCheckMatchTheHostForEveryType) {
  SKIP_WITHOUT_GPU();
  bindDevice();
  const std::uint64_t elems = 100003;
  for (const auto& dt : core::allDTypes()) {
    const core::Pattern p = core::patternFor(core::Op::kAllGather, core::RedOp::kSum, dt.type, 4, 9);
    DeviceMemory d(elems * dt.size);
    ASSERT_EQ(kernels::fillInput(dt.type, d.ptr, elems, p, 2, nullptr), cudaSuccess);
    std::vector<std::byte> got(elems * dt.size);
    ASSERT_EQ(cudaMemcpy(got.data(), d.ptr, got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    if (worker::hostSupports(dt.type)) {
      std::vector<std::byte> want(got.size());
      worker::fillInput(dt.type, want.data(), elems, p, 2);
      EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size()), 0) << dt.name;
    }
    // all_gather of 4 ranks, seen from rank 2: its own block is its input
    const kernels::DeviceCheck own{core::SourceRule::kFromRoot, p, 2, 4, 2, elems};
    cudaError_t error = cudaSuccess;
    EXPECT_EQ(kernels::countWrong(dt.type, d.ptr, elems, own, nullptr, error), 0u) << dt.name;
    EXPECT_EQ(error, cudaSuccess);
    ASSERT_EQ(kernels::corruptElement(dt.type, static_cast<std::byte*>(d.ptr) + 5 * dt.size, p, nullptr),
              cudaSuccess);
    EXPECT_EQ(kernels::countWrong(dt.type, d.ptr, elems, own, nullptr, error), 1u) << dt.name;
    // against another rank's data everything is (nearly) wrong
    const kernels::DeviceCheck other{core::SourceRule::kFromRoot, p, 2, 4, 1, elems};
    EXPECT_GT(kernels::countWrong(dt.type, d.ptr, elems, other, nullptr, error), elems * 9 / 10) << dt.name;
  }
}

TEST(Kernels, SmCopyCopiesEveryByteAtAnyAlignment) {
  SKIP_WITHOUT_GPU();
  bindDevice();
  const std::size_t bytes = (1u << 20) + 13;
  DeviceMemory src(bytes + 64);
  DeviceMemory dst(bytes + 64);
  std::vector<unsigned char> host(bytes + 64);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<unsigned char>(i * 131 + 7);
  ASSERT_EQ(cudaMemcpy(src.ptr, host.data(), host.size(), cudaMemcpyHostToDevice), cudaSuccess);
  for (std::size_t srcOff : {0u, 3u, 16u}) {
    for (std::size_t dstOff : {0u, 5u, 16u}) {
      ASSERT_EQ(cudaMemset(dst.ptr, 0, bytes + 64), cudaSuccess);
      ASSERT_EQ(kernels::smCopy(static_cast<char*>(dst.ptr) + dstOff, static_cast<char*>(src.ptr) + srcOff,
                                bytes, 0, nullptr),
                cudaSuccess);
      std::vector<unsigned char> out(bytes);
      ASSERT_EQ(cudaMemcpy(out.data(), static_cast<char*>(dst.ptr) + dstOff, bytes, cudaMemcpyDeviceToHost),
                cudaSuccess);
      EXPECT_EQ(std::memcmp(out.data(), host.data() + srcOff, bytes), 0) << srcOff << "/" << dstOff;
    }
  }
}

TEST(Kernels, StartGateHoldsTheStreamUntilReleased) {
  SKIP_WITHOUT_GPU();
  bindDevice();
  int* flag = nullptr;
  ASSERT_EQ(cudaHostAlloc(reinterpret_cast<void**>(&flag), sizeof(int), cudaHostAllocMapped), cudaSuccess);
  *flag = 0;
  int* deviceFlag = nullptr;
  ASSERT_EQ(cudaHostGetDevicePointer(reinterpret_cast<void**>(&deviceFlag), flag, 0), cudaSuccess);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(kernels::startGate(deviceFlag, stream), cudaSuccess);
  EXPECT_EQ(cudaStreamQuery(stream), cudaErrorNotReady);
  *reinterpret_cast<volatile int*>(flag) = 1;
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  cudaStreamDestroy(stream);
  cudaFreeHost(flag);
}

// The NCCL backend passes the same checks as the MPI one, with every type NCCL has.
TEST(NcclBackend, EveryOpTypeReductionAndPlacementIsExact) {
  SKIP_WITHOUT_GPU();
  worker::BackendContext context;
  context.localRank = localRank();
  std::unique_ptr<worker::Backend> backend = worker::nccl::createBackend(context);
  std::vector<core::DType> all;
  for (const auto& t : core::allDTypes()) all.push_back(t.type);
  const test_support::CheckedCases cases = test_support::checkEveryCollective(*backend, all);
  EXPECT_EQ(cases.run + cases.waived, 3 * 10 * 4 * 2 + 4 * 10 * 2);
  EXPECT_EQ(cases.waived, 2 * 10);  // in-place alltoall and sendrecv
}

TEST(NcclBackend, PairTransfersBetweenTwoRanks) {
  SKIP_WITHOUT_GPU();
  int n = 0;
  int rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (n < 2) GTEST_SKIP() << "needs 2 ranks";
  worker::BackendContext context;
  context.localRank = localRank();
  std::unique_ptr<worker::Backend> backend = worker::nccl::createBackend(context);
  worker::PairSpec spec;
  spec.bytes = 4u << 20;
  spec.window = 4;
  spec.iters = 5;
  spec.warmup = 1;
  spec.latencyIters = 20;
  auto pairs = backend->preparePairs(MPI_COMM_WORLD, spec);
  if (rank < 2) {
    const int peer = 1 - rank;
    const bool first = rank == 0;
    EXPECT_GT(pairs->stream(peer, first, !first).seconds, 0.0);
    EXPECT_GT(pairs->stream(peer, true, true).seconds, 0.0);
    EXPECT_GT(pairs->pingPong(peer, first), 0.0);
    EXPECT_EQ(pairs->checkedTransfer(peer, first), 0u);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// Copies between the GPUs of ranks 0 and 1 (on a one-GPU machine both ranks map the same GPU
// through IPC, which still exercises every call): copy engine and SM kernel, write and read.
TEST(NcclBackend, GpuPairCopiesAreTimedAndExact) {
  SKIP_WITHOUT_GPU();
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) GTEST_SKIP() << "needs 2 ranks";
  worker::BackendContext context;
  context.localRank = localRank();
  std::unique_ptr<worker::Backend> backend = worker::nccl::createBackend(context);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int ran = test_support::checkCopies(*backend, (8u << 20) + 12);
  if (rank < 2) {
    EXPECT_GE(ran, 1);  // the copy engine always; the SM kernel with peer access
  }
}

}  // namespace
}  // namespace fabricmap
