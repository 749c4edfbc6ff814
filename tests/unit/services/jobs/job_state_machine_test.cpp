#include "services/jobs/job_state_machine.h"

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
      {S::kPending, S::kPending},      {S::kPending, S::kCancelling},
      {S::kRunning, S::kSucceeded},    {S::kRunning, S::kFailed},
      {S::kRunning, S::kPending},      {S::kRunning, S::kQueued},
      {S::kRunning, S::kCancelling},   {S::kRunning, S::kRunning},
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
  JobSnapshot job{1, 1, S::kPending};
  Timestamp t1 = FromUnixMicros(1000);
  auto first = JobStateMachine::Transition(job, S::kRunning, t1, "up");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->start_time(), t1);
  job.started = true;
  auto again = JobStateMachine::Transition(job, S::kRunning, FromUnixMicros(5000), "restarted");
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->start_time().has_value());
}

TEST(JobStateMachineTest, TerminalStatesStampEndTimeAndErrors) {
  JobSnapshot job{1, 1, S::kCancelling};
  Timestamp t = FromUnixMicros(42);
  auto cancelled = JobStateMachine::Transition(job, S::kCancelled, t, "stopped");
  ASSERT_TRUE(cancelled.ok());
  EXPECT_EQ(cancelled->end_time(), t);
  ASSERT_TRUE(cancelled->error().has_value());
  EXPECT_EQ(cancelled->error()->code, 1);
  job.state = S::kRunning;
  auto succeeded = JobStateMachine::Transition(job, S::kSucceeded, t, "done");
  ASSERT_TRUE(succeeded.ok());
  EXPECT_EQ(succeeded->end_time(), t);
  EXPECT_FALSE(succeeded->error().has_value());
}

TEST(JobStateMachineTest, ARefusedTransitionIsFailedPrecondition) {
  JobSnapshot job{2, 1, S::kSucceeded};
  auto t = JobStateMachine::Transition(job, S::kCancelling, FromUnixMicros(1), "cancel");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(t.status().message().find("JOB_STATE_SUCCEEDED"), std::string::npos);
}

TEST(JobStateMachineTest, TerminalTransitionsAccrueTheAdmissionsCost) {
  auto done = JobStateMachine::Transition({1, 1, S::kRunning, true}, S::kSucceeded,
                                          FromUnixMicros(9), "done");
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(done->ends_admission());
  EXPECT_FALSE(done->clears_admission());  // a finished job keeps its placement for its bill
}

TEST(JobStateMachineTest, AdmitTakesOnlyAQueuedJobAndLeavesTheAdmittedNote) {
  JobAdmission admission;
  admission.zone = "us-central1-a";
  admission.hourly_price_micros = 88'000'000;
  Timestamp now = FromUnixMicros(100);
  auto admitted = JobStateMachine::Admit({1, 3, S::kQueued}, now, admission, "fits");
  ASSERT_TRUE(admitted.ok());
  EXPECT_EQ(admitted->from(), S::kQueued);
  EXPECT_EQ(admitted->to(), S::kPending);
  EXPECT_EQ(admitted->next_action_at(), now)
      << "no simulated startup: the runtime launches at once";
  ASSERT_TRUE(admitted->admission().has_value());
  EXPECT_EQ(admitted->admission()->hourly_price_micros, 88'000'000);
  ASSERT_TRUE(admitted->note().has_value());
  EXPECT_EQ(admitted->note()->code, "ADMITTED");
  admission.startup = std::chrono::seconds(90);  // booting cold nodes, pulling the image
  auto booting = JobStateMachine::Admit({1, 3, S::kQueued}, now, admission, "fits");
  ASSERT_TRUE(booting.ok());
  EXPECT_EQ(booting->next_action_at(), now + std::chrono::seconds(90));
  auto twice = JobStateMachine::Admit({1, 4, S::kPending}, now, admission, "fits");
  EXPECT_EQ(twice.status().code(), Code::kFailedPrecondition);
}

TEST(JobStateMachineTest, RequeueRecordsTheTrueFromStateAndKeepsProgressOnlyWhenRunning) {
  Timestamp now = FromUnixMicros(100);
  auto running = JobStateMachine::Requeue({1, 5, S::kRunning, true}, now, "preempted", false);
  ASSERT_TRUE(running.ok());
  EXPECT_EQ(running->from(), S::kRunning);
  EXPECT_EQ(running->to(), S::kQueued);
  EXPECT_TRUE(running->interrupts_run());
  EXPECT_TRUE(running->ends_admission());
  EXPECT_TRUE(running->clears_admission());
  EXPECT_FALSE(running->next_action_at().has_value());  // the executor's lease goes with it
  auto pending = JobStateMachine::Requeue({1, 5, S::kPending}, now, "preempted", true);
  ASSERT_TRUE(pending.ok());
  EXPECT_EQ(pending->from(), S::kPending);  // not recorded as coming from RUNNING
  EXPECT_FALSE(pending->interrupts_run());
  EXPECT_TRUE(pending->spot_restart());
  ASSERT_TRUE(pending->note().has_value());
  EXPECT_EQ(pending->note()->code, "PREEMPTED");
  for (S state : {S::kQueued, S::kCancelling, S::kSucceeded}) {
    EXPECT_FALSE(JobStateMachine::Requeue({1, 5, state}, now, "x", false).ok());
  }
}

TEST(JobStateMachineTest, StockoutFailsWithResourceExhaustedAndClearsTheNote) {
  auto failed = JobStateMachine::Stockout({1, 2, S::kRunning, true}, FromUnixMicros(7), "STOCKOUT");
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(failed->to(), S::kFailed);
  ASSERT_TRUE(failed->error().has_value());
  EXPECT_EQ(failed->error()->code, 8);
  ASSERT_TRUE(failed->note().has_value());
  EXPECT_TRUE(failed->note()->code.empty());
}

TEST(JobStateMachineTest, ARepairStopsTheGangAndResumesItOnlyWhenNoNodeIsDown) {
  Timestamp now = FromUnixMicros(100);
  auto stop = JobStateMachine::StopForRepair({1, 2, S::kRunning, true}, now, "node failed");
  ASSERT_TRUE(stop.ok());
  EXPECT_EQ(stop->to(), S::kPending);
  EXPECT_TRUE(stop->interrupts_run());
  EXPECT_FALSE(stop->next_action_at().has_value());
  auto resume = JobStateMachine::ResumeAfterRepair({1, 3, S::kPending, true}, now,
                                                   FromUnixMicros(900), "repaired");
  ASSERT_TRUE(resume.ok());
  EXPECT_EQ(resume->from(), S::kPending);
  EXPECT_EQ(resume->to(), S::kPending);
  EXPECT_TRUE(resume->requires_nodes_up());
  EXPECT_EQ(resume->next_action_at(), FromUnixMicros(900));
  EXPECT_FALSE(JobStateMachine::ResumeAfterRepair({1, 3, S::kRunning}, now, now, "x").ok());
}

}  // namespace
}  // namespace trainyard
