// What Open MPI selected, read back under mpiexec: the test environment pins the btls
// (OMPI_MCA_btl=self,vader, tests/mpi/CMakeLists.txt), so with ob1 those and only those are named.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "worker/mpi_transport.h"

namespace fabricmap::worker {
namespace {

TEST(MpiTransport, NamesThePmlAndTheBtlsTheEnvironmentAllowed) {
  const std::string transport = mpiTransport();
  ASSERT_EQ(transport.rfind("pml ", 0), 0u) << "'" << transport << "' (Open MPI's selection was not found)";
  const char* btl = std::getenv("OMPI_MCA_btl");
  if (transport.rfind("pml ob1", 0) != 0 || btl == nullptr) GTEST_SKIP() << transport << " (btls not pinned here)";
  std::vector<std::string> allowed;
  std::stringstream list(btl);
  for (std::string name; std::getline(list, name, ',');) allowed.push_back(name);
  std::sort(allowed.begin(), allowed.end());
  std::string expected = "pml ob1, btl ";
  for (std::size_t i = 0; i < allowed.size(); ++i) expected += (i ? "," : "") + allowed[i];
  EXPECT_EQ(transport, expected);
}

}  // namespace
}  // namespace fabricmap::worker
