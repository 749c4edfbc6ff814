// The background roles' sessions on the embedded cluster run at a lower CPU priority, so a
// request's backend is not kept waiting for a core behind a background pass's; a session whose
// backend is not the cluster's own is left alone.
#include "storage/backend_priority.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "storage/embedded_postgres.h"
#include "tests/integration/test_database.h"

namespace trainyard::storage {
namespace {

// The nice value of process `pid` (the 19th field of /proc/PID/stat).
int NiceOf(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string field;
  for (int i = 3; i <= 19; ++i) rest >> field;
  return std::stoi(field);
}

TEST(BackendPriorityTest, ABackgroundSessionsBackendRunsAtTheLowerPriority) {
  const int postmaster = testing::SharedCluster().postmaster_pid();
  ASSERT_GT(postmaster, 0);
  auto background =
      pg::Connection::Connect(testing::FreshDatabase(), BackgroundSession(postmaster));
  ASSERT_TRUE(background.ok()) << background.status().message();
  auto request = pg::Connection::Connect(testing::FreshDatabase());
  ASSERT_TRUE(request.ok()) << request.status().message();
  // Relative to the cluster's own priority: the suite may itself run under `nice`.
  const int base = NiceOf(postmaster);
  EXPECT_EQ(NiceOf((*background)->backend_pid()), std::min(19, base + 10));
  EXPECT_EQ(NiceOf((*request)->backend_pid()), base) << "a request's session is left alone";
}

TEST(BackendPriorityTest, ABackendThatIsNotTheClustersOwnIsLeftAlone) {
  auto conn = pg::Connection::Connect(testing::FreshDatabase());
  ASSERT_TRUE(conn.ok()) << conn.status().message();
  // Told another postmaster (this process): the backend is not its child, so nothing changes.
  Status s = LowerBackendPriority(**conn, getpid(), 10);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition) << s.message();
  EXPECT_EQ(NiceOf((*conn)->backend_pid()), NiceOf(testing::SharedCluster().postmaster_pid()));
  EXPECT_EQ(BackgroundSession(0).on_connect, nullptr) << "no cluster of our own: no hook";
}

// A background pass reads a few hundred rows at a time: a parallel plan would start two worker
// processes for each read. Requests keep the server's setting.
TEST(BackendPriorityTest, ABackgroundSessionPlansWithoutParallelWorkers) {
  auto workers = [](pg::Connection& conn) {
    auto r = conn.Exec("SHOW max_parallel_workers_per_gather");
    return r.ok() && r->rows() == 1 ? std::string(r->Get(0, 0)) : std::string("?");
  };
  for (int postmaster : {testing::SharedCluster().postmaster_pid(), 0}) {
    auto background =
        pg::Connection::Connect(testing::FreshDatabase(), BackgroundSession(postmaster));
    ASSERT_TRUE(background.ok()) << background.status().message();
    EXPECT_EQ(workers(**background), "0") << "postmaster " << postmaster;
  }
  auto request = pg::Connection::Connect(testing::FreshDatabase());
  ASSERT_TRUE(request.ok()) << request.status().message();
  EXPECT_NE(workers(**request), "0");
}

}  // namespace
}  // namespace trainyard::storage
