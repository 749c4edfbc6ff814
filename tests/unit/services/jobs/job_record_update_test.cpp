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

// A run that started and ended between two looks is one write (JobTransition::via): it must hold
// exactly what writing its start and then its end would have, cost and every goodput bucket.
TEST(JobRecordUpdateTest, AStartAndItsEndInOneWriteWriteWhatTheTwoWouldHave) {
  using std::chrono::seconds;
  JobRecord record;
  record.id = 1;
  record.version = 5;
  record.job.state = S::kPending;
  record.job.update_time = FromUnixMicros(0);
  record.state_since = FromUnixMicros(0);
  record.job.trainyard = SchedulingStatus{};
  record.job.trainyard->admitted_at = FromUnixMicros(0);
  record.job.trainyard->program_startup = seconds(3);
  record.hourly_price_micros = 36'000'000;
  record.checkpoint_interval = seconds(10);
  record.checkpoint_cost = CheckpointCost{seconds(1), seconds(2)};
  const Timestamp started = FromUnixMicros(0) + seconds(40);
  const Timestamp ended = started + seconds(95);

  auto start = JobStateMachine::Transition(SnapshotOf(1, 5, record.job), S::kRunning, started,
                                           "all replicas are running");
  ASSERT_TRUE(start.ok());
  JobRecord two = record;
  ApplyToRecord(*start, two);
  auto end = JobStateMachine::Transition(SnapshotOf(1, 6, two.job), S::kSucceeded, ended,
                                         "the primary replica exited with status 0");
  ASSERT_TRUE(end.ok());
  const JobTransitionWrite second = WriteOf(*end, BasisOf(two));
  ApplyToRecord(*end, two);

  auto both = JobStateMachine::Through(*start, *end);
  ASSERT_TRUE(both.ok()) << both.status().message();
  const JobTransitionWrite one = WriteOf(*both, BasisOf(record));
  EXPECT_EQ(one.cost_micros, second.cost_micros);
  EXPECT_EQ(one.state_since, second.state_since);
  EXPECT_EQ(one.goodput, second.goodput);
  EXPECT_EQ(one.checkpointed, second.checkpointed);
  EXPECT_EQ(one.goodput.starting, seconds(40));
  EXPECT_EQ(one.goodput.running, seconds(95));
  EXPECT_GT(one.goodput.checkpoint_save, Duration{}) << "the run's saves are counted";

  JobRecord once = record;
  ApplyToRecord(*both, once);
  EXPECT_EQ(once.job.state, S::kSucceeded);
  EXPECT_EQ(once.job.start_time, started);
  EXPECT_EQ(once.job.end_time, ended);
  EXPECT_EQ(once.version, record.version + 1) << "one write";
  EXPECT_EQ(once.cost_micros, two.cost_micros);
  EXPECT_EQ(once.job.trainyard->goodput, two.job.trainyard->goodput);
}

TEST(JobRecordUpdateTest, OnlyAStartPassesIntoItsEnd) {
  const Timestamp t = FromUnixMicros(1000);
  auto queued = JobStateMachine::Transition({1, 5, S::kQueued}, S::kPending, t, "admitted");
  auto start = JobStateMachine::Transition({1, 5, S::kPending}, S::kRunning, t, "up");
  auto end = JobStateMachine::Transition({1, 6, S::kRunning, true}, S::kSucceeded, t, "done");
  auto earlier = JobStateMachine::Transition({1, 6, S::kRunning, true}, S::kFailed,
                                             FromUnixMicros(999), "failed before it started");
  ASSERT_TRUE(queued.ok() && start.ok() && end.ok() && earlier.ok());
  EXPECT_TRUE(JobStateMachine::Through(*start, *end).ok());
  EXPECT_FALSE(JobStateMachine::Through(*queued, *start).ok()) << "only a start";
  EXPECT_FALSE(JobStateMachine::Through(*start, *earlier).ok()) << "no end before its start";
  EXPECT_FALSE(JobStateMachine::Through(*end, *start).ok());
  auto both = JobStateMachine::Through(*start, *end);
  EXPECT_FALSE(JobStateMachine::Through(*both, *end).ok()) << "one passage at most";
}

}  // namespace
}  // namespace trainyard
