// The backend registry: every backend is known by name in every build, `auto` and explicit names
// resolve through what each backend says it is, never through its name.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/config.h"
#include "core/error.h"
#include "worker/backends.h"

namespace fabricmap::worker {
namespace {

TEST(Backends, EveryBackendIsKnownOnceAndCreatableOnlyWhenBuilt) {
  std::set<std::string_view> names;
  for (const BackendInfo* b : registeredBackends()) {
    EXPECT_TRUE(names.insert(b->name).second) << b->name;
    EXPECT_EQ(findBackend(b->name), b);
    EXPECT_TRUE(b->measures.collectives || b->name == "ucx") << b->name;  // UCP is point-to-point
    EXPECT_TRUE(b->measures.pairs) << b->name;
  }
  ASSERT_NE(findBackend("mpi"), nullptr);
  ASSERT_NE(findBackend("nccl"), nullptr);
  ASSERT_NE(findBackend("ucx"), nullptr);
  EXPECT_TRUE(findBackend("mpi")->available());
  EXPECT_EQ(findBackend("nccl")->available(), FABRICMAP_HAVE_NCCL == 1);
  EXPECT_EQ(findBackend("ucx")->available(), FABRICMAP_HAVE_UCX == 1);
  EXPECT_EQ(findBackend("ucx")->memory, MemoryKind::kHost);
  EXPECT_EQ(findBackend("nccl")->memory, MemoryKind::kCuda);
  EXPECT_EQ(findBackend("mpi")->memory, MemoryKind::kHost);
  EXPECT_EQ(findBackend("ucx-typo"), nullptr);
  EXPECT_EQ(backendNames(true), "auto, mpi, nccl or ucx");
  EXPECT_EQ(backendNames(false, [](const BackendInfo& b) { return b.measures.graphs; }), "nccl");
}

// auto never takes ucx: it measures no collectives.
TEST(Backends, AutoTakesAGpuBackendOnlyWhenEveryRankHasAGpu) {
  const BackendChoice short_ = resolveBackend("auto", "node1 has 2 GPU(s) for 4 ranks");
  EXPECT_EQ(short_.name, "mpi");
  EXPECT_EQ(short_.info, findBackend("mpi"));
  EXPECT_EQ(short_.reason, FABRICMAP_HAVE_NCCL ? "node1 has 2 GPU(s) for 4 ranks" : "this build has no GPU backend");
  const BackendChoice full = resolveBackend("auto", "");
  EXPECT_EQ(full.name, FABRICMAP_HAVE_NCCL ? "nccl" : "mpi");
  EXPECT_EQ(full.info->memory, FABRICMAP_HAVE_NCCL ? MemoryKind::kCuda : MemoryKind::kHost);
}

TEST(Backends, ANamedBackendMustExistBeBuiltAndHaveItsGpus) {
  const BackendChoice mpi = resolveBackend("mpi", "no GPU on node0");
  EXPECT_EQ(mpi.name, "mpi");
  EXPECT_TRUE(mpi.reason.empty());
  try {
    resolveBackend("gloo", "");
    FAIL() << "an unknown backend resolved";
  } catch (const core::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown backend 'gloo' (available: auto, mpi"), std::string::npos) << e.what();
  }
  try {
    resolveBackend("nccl", "no GPU on node0");
    FAIL() << "nccl resolved without GPUs";
  } catch (const core::UsageError& e) {
    const std::string why = FABRICMAP_HAVE_NCCL ? "needs one GPU per rank: no GPU on node0" : "is not available in this build";
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fabricmap::worker
