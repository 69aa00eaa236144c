// GPUDirect RDMA through dma-buf: the CUDA driver asked through dlopen (stand-in libraries built
// beside the tests: tests/unit/topologies/fake_libcuda.cpp), the kernel release read, and the
// sysfs verdict changed only where the driver and the kernel both allow dma-buf.
#include <gtest/gtest.h>

#include <string>

#include "topologies/cuda_driver.h"

namespace fabricmap::topologies {
namespace {

std::string fake(const char* name) { return std::string(FABRICMAP_FAKE_CUDA_DIR) + "/libfake_cuda_" + name + ".so"; }

TEST(CudaDriver, AsksEveryGpuThroughTheLoadedLibrary) {
  const DmaBufSupport yes = askCudaDriver(fake("dmabuf"));
  EXPECT_EQ(yes.supported, Tristate::kYes) << yes.how;
  EXPECT_EQ(yes.how, "the CUDA driver reports dma-buf support on all 2 GPUs");
  const DmaBufSupport no = askCudaDriver(fake("no_dmabuf"));
  EXPECT_EQ(no.supported, Tristate::kNo);
  EXPECT_EQ(no.how, "the CUDA driver reports no dma-buf support on GPU 1");
  const DmaBufSupport noDevice = askCudaDriver(fake("no_device"));
  EXPECT_EQ(noDevice.supported, Tristate::kUnknown);
  EXPECT_EQ(noDevice.how, "cuInit failed (100)");
  EXPECT_EQ(askCudaDriver("/nonexistent/libcuda.so.1").supported, Tristate::kUnknown);
  const DmaBufSupport notCuda = askCudaDriver("libc.so.6");
  EXPECT_EQ(notCuda.supported, Tristate::kUnknown);
  EXPECT_EQ(notCuda.how, "libc.so.6 is not the CUDA driver");
}

TEST(CudaDriver, KernelReleasesWithRdmaDmaBuf) {
  EXPECT_TRUE(kernelHasRdmaDmaBuf("5.12.0"));
  EXPECT_TRUE(kernelHasRdmaDmaBuf("6.8.0-45-generic"));
  EXPECT_TRUE(kernelHasRdmaDmaBuf("10.0"));
  EXPECT_FALSE(kernelHasRdmaDmaBuf("5.11.22"));
  EXPECT_FALSE(kernelHasRdmaDmaBuf("4.18.0-513.el8.x86_64"));
  for (const char* odd : {"", "5", "5.", ".12", "x5.12", "99999999999999999999.1"}) {
    EXPECT_FALSE(kernelHasRdmaDmaBuf(odd)) << odd;
  }
}

TEST(CudaDriver, DmaBufDecidesOnlyWhereNoModuleIsLoaded) {
  const GpuDirect noModule{Tristate::kNo, "no peer-memory module (nvidia_peermem, nv_peer_mem) loaded; ..."};
  const DmaBufSupport yes{Tristate::kYes, "the CUDA driver reports dma-buf support on all 8 GPUs"};
  const GpuDirect viaDmaBuf = withDmaBuf(noModule, yes, "6.8.0-45-generic");
  EXPECT_EQ(viaDmaBuf.ready, Tristate::kYes);
  EXPECT_EQ(viaDmaBuf.how, "dma-buf: the CUDA driver reports dma-buf support on all 8 GPUs, kernel 6.8.0-45-generic "
                           "(no peer-memory module)");
  const GpuDirect oldKernel = withDmaBuf(noModule, yes, "4.18.0-513.el8.x86_64");
  EXPECT_EQ(oldKernel.ready, Tristate::kNo);
  EXPECT_NE(oldKernel.how.find("kernel 4.18.0-513.el8.x86_64 predates RDMA dma-buf (5.12)"), std::string::npos);
  const GpuDirect refused = withDmaBuf(noModule, {Tristate::kNo, "the CUDA driver reports no dma-buf support on GPU 3"},
                                       "6.8.0");
  EXPECT_EQ(refused.ready, Tristate::kNo);
  EXPECT_NE(refused.how.find("and the CUDA driver reports no dma-buf support on GPU 3"), std::string::npos);
  // the driver could not be asked: sysfs's verdict stands; a loaded module or no GPU: not asked at all
  EXPECT_EQ(withDmaBuf(noModule, {Tristate::kUnknown, "cuInit failed (100)"}, "6.8.0").how, noModule.how);
  const GpuDirect loaded{Tristate::kYes, "nvidia_peermem loaded"};
  EXPECT_EQ(withDmaBuf(loaded, {Tristate::kNo, "x"}, "6.8.0").how, "nvidia_peermem loaded");
  const GpuDirect noGpu{Tristate::kUnknown, "no GPU"};
  EXPECT_EQ(withDmaBuf(noGpu, yes, "6.8.0").ready, Tristate::kUnknown);
}

// A saved tree is another machine: its verdict is the tree's, whatever this machine's driver says.
TEST(CudaDriver, ASavedTreeKeepsItsOwnVerdict) {
  const std::string tree = std::string(FABRICMAP_TEST_DATA) + "/sysfs/no-peermem";
  const Inventory saved = readLocalInventory(tree);
  EXPECT_EQ(saved.gpuDirect.ready, Tristate::kNo);
  EXPECT_EQ(saved.gpuDirect.how, readInventory(tree).gpuDirect.how);
}

}  // namespace
}  // namespace fabricmap::topologies
