#include "services/job_state_machine.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>

namespace trainyard {
namespace {

using S = JobState;

TEST(JobStateMachineTest, AllowsExactlyTheLifecycleTransitions) {
  const std::set<std::pair<S, S>> allowed = {
      {S::kQueued, S::kPending},       {S::kQueued, S::kFailed},
      {S::kQueued, S::kCancelling},    {S::kPending, S::kRunning},
      {S::kPending, S::kQueued},       {S::kPending, S::kFailed},
      {S::kPending, S::kCancelling},   {S::kRunning, S::kSucceeded},
      {S::kRunning, S::kFailed},       {S::kRunning, S::kPending},
      {S::kRunning, S::kQueued},       {S::kRunning, S::kCancelling},
      {S::kCancelling, S::kCancelled}, {S::kCancelling, S::kSucceeded},
      {S::kCancelling, S::kFailed},
  };
  for (int from = 0; from <= 11; ++from) {
    for (int to = 0; to <= 11; ++to) {
      bool expected = allowed.count({static_cast<S>(from), static_cast<S>(to)}) > 0;
      EXPECT_EQ(JobStateMachine::IsAllowed(static_cast<S>(from), static_cast<S>(to)), expected)
          << from << " -> " << to;
    }
  }
}

TEST(JobStateMachineTest, FirstRunStampsStartTimeAndARestartKeepsIt) {
  CustomJob job;
  job.state = S::kPending;
  Timestamp t1 = FromUnixMicros(1000);
  auto first = JobStateMachine::Transition(job, S::kRunning, t1, "up");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->start_time, t1);
  job.start_time = t1;
  auto again = JobStateMachine::Transition(job, S::kRunning, FromUnixMicros(5000), "restarted");
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->start_time.has_value());
}

TEST(JobStateMachineTest, TerminalStatesStampEndTimeAndErrors) {
  CustomJob job;
  job.state = S::kCancelling;
  Timestamp t = FromUnixMicros(42);
  auto cancelled = JobStateMachine::Transition(job, S::kCancelled, t, "stopped");
  ASSERT_TRUE(cancelled.ok());
  EXPECT_EQ(cancelled->end_time, t);
  ASSERT_TRUE(cancelled->error.has_value());
  EXPECT_EQ(cancelled->error->code, 1);
  job.state = S::kRunning;
  auto succeeded = JobStateMachine::Transition(job, S::kSucceeded, t, "done");
  ASSERT_TRUE(succeeded.ok());
  EXPECT_EQ(succeeded->end_time, t);
  EXPECT_FALSE(succeeded->error.has_value());
}

TEST(JobStateMachineTest, ARefusedTransitionIsFailedPrecondition) {
  CustomJob job;
  job.name = "projects/1/locations/l/customJobs/2";
  job.state = S::kSucceeded;
  auto t = JobStateMachine::Transition(job, S::kCancelling, FromUnixMicros(1), "cancel");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(t.status().message().find("JOB_STATE_SUCCEEDED"), std::string::npos);
}

}  // namespace
}  // namespace trainyard
