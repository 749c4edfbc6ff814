// Named states in SQL: each becomes a smallint parameter after the statement's own, bound to the
// enum's number.
#include "storage/state_sql.h"

#include <gtest/gtest.h>

#include "services/fleet/node_state.h"
#include "services/model/custom_job.h"

namespace trainyard::storage {
namespace {

TEST(StateSqlTest, NamedStatesFollowThePositionalParametersAndBindTheEnumsNumbers) {
  const StateSql sql(
      "UPDATE nodes SET state = CASE WHEN state = :node_ready THEN :node_busy ELSE state END "
      "WHERE job_id = $1::bigint AND state IN (:node_ready, :node_deleted) AND $2 = ':job_queued'");
  EXPECT_EQ(sql.text(),
            "UPDATE nodes SET state = CASE WHEN state = $3::smallint THEN $4::smallint ELSE state "
            "END WHERE job_id = $1::bigint AND state IN ($3::smallint, $5::smallint) AND $2 = "
            "':job_queued'");
  pg::Statement st = sql.With({"7", "x"});
  ASSERT_EQ(st.params.size(), 5u);
  EXPECT_EQ(st.params[0], "7");
  EXPECT_EQ(st.params[2], std::to_string(static_cast<int>(NodeState::kReady)));
  EXPECT_EQ(st.params[3], std::to_string(static_cast<int>(NodeState::kBusy)));
  EXPECT_EQ(st.params[4], std::to_string(static_cast<int>(NodeState::kDeleted)));
}

TEST(StateSqlTest, JobAndResourceStatesUseTheirProtoNames) {
  const StateSql sql(
      "SELECT 1 WHERE :job_queued = 1 AND :job_partially_succeeded = 11 AND "
      ":resource_provisioning = 1 AND :resource_error = 5");
  pg::Statement st = sql.With({});
  EXPECT_EQ(st.params, (pg::Params{std::to_string(static_cast<int>(JobState::kQueued)),
                                   std::to_string(static_cast<int>(JobState::kPartiallySucceeded)),
                                   "1", "5"}));
}

TEST(StateSqlDeathTest, AMisspeltStateOrAMissingParameterIsRefused) {
  EXPECT_DEATH(StateSql("SELECT 1 WHERE state = :node_redy"), "no such state: node_redy");
  const StateSql two("SELECT $1, $2");
  EXPECT_DEATH(two.With({"only one"}), "wrong number of parameters");
}

}  // namespace
}  // namespace trainyard::storage
