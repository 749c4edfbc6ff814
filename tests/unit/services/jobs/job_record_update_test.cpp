// What a transition writes from the row it moves: the stores write these values, never compute
// them (storage/job_transition_sql.cpp sets them as parameters).
#include "services/jobs/job_record_update.h"

#include <gtest/gtest.h>

#include "services/jobs/job_state_machine.h"

namespace trainyard {
namespace {

using S = JobState;

TEST(JobRecordUpdateTest, ASpotRestartCountsOneMoreThanTheRowRead) {
  JobTransitionBasis basis;
  basis.version = 5;
  basis.spot_restarts = 2;
  auto spot = JobStateMachine::Requeue({1, 5, S::kPending}, FromUnixMicros(100), "reclaimed", true);
  ASSERT_TRUE(spot.ok());
  EXPECT_EQ(WriteOf(*spot, basis).spot_restarts, 3);
  auto other = JobStateMachine::Requeue({1, 5, S::kPending}, FromUnixMicros(100), "taken", false);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(WriteOf(*other, basis).spot_restarts, 2);
}

TEST(JobRecordUpdateTest, ApplyToRecordTakesTheSpotRestartsFromTheWrite) {
  JobRecord record;
  record.id = 1;
  record.version = 5;
  record.job.state = S::kPending;
  record.spot_restarts = 1;
  EXPECT_EQ(BasisOf(record).spot_restarts, 1);
  auto spot = JobStateMachine::Requeue({1, 5, S::kPending}, FromUnixMicros(100), "reclaimed", true);
  ASSERT_TRUE(spot.ok());
  ApplyToRecord(*spot, record);
  EXPECT_EQ(record.spot_restarts, 2);
  EXPECT_EQ(record.job.trainyard->spot_restarts, 2);
}

}  // namespace
}  // namespace trainyard
