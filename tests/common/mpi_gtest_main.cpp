// main() of the multi-rank GoogleTest programs (tests/mpi, tests/gpu): MPI around the tests, one
// report from rank 0, and a failure on any rank fails every rank's exit code. A program built with
// FABRICMAP_TEST_SKIP_EXIT returns that code when nothing failed but a test skipped itself on
// some rank (CTest's SKIP_RETURN_CODE: reported as skipped, not passed).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    delete ::testing::UnitTest::GetInstance()->listeners().Release(
        ::testing::UnitTest::GetInstance()->listeners().default_result_printer());
  }
  const int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int anyFailed = 0;
  MPI_Allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && anyFailed && !failed) std::fprintf(stderr, "a test failed on another rank\n");
  const int skipped = ::testing::UnitTest::GetInstance()->skipped_test_count();
  int anySkipped = 0;
  MPI_Allreduce(&skipped, &anySkipped, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
#ifdef FABRICMAP_TEST_SKIP_EXIT
  if (!anyFailed && anySkipped > 0) {
    if (rank == 0) std::fprintf(stderr, "%d test(s) skipped: reported as skipped\n", anySkipped);
    return FABRICMAP_TEST_SKIP_EXIT;
  }
#endif
  return anyFailed;
}
