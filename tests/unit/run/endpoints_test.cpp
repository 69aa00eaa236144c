// A rank's endpoints grouped for /inventory/endpoints: one row per distinct way, peers as ranges.
#include "orchestrator/run/endpoints.h"

#include <gtest/gtest.h>

namespace fabricmap::orchestrator {
namespace {

TEST(EndpointRows, PeersReachedTheSameWayShareARow) {
  const std::string local = "sysv/memory (am, am_bw); cma/memory (rma_bw)";
  const std::string remote = "tcp/eth0 (am, am_bw, rma_bw)";
  const std::vector<core::EndpointRecord> rows =
      endpointRows(2, {{3, local}, {5, remote}, {0, remote}, {1, local}, {4, remote}, {6, ""}});
  ASSERT_EQ(rows.size(), 2u);  // the path UCX did not print is left out
  EXPECT_EQ(rows[0].rank, 2);
  EXPECT_EQ(rows[0].peers, "1,3");
  EXPECT_EQ(rows[0].transports, local);
  EXPECT_EQ(rows[1].peers, "0,4-5");
  EXPECT_EQ(rows[1].transports, remote);
  EXPECT_TRUE(endpointRows(0, {}).empty());
}

}  // namespace
}  // namespace fabricmap::orchestrator
