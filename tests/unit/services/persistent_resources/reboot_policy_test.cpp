#include "services/persistent_resources/reboot_policy.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

const Timestamp kNow = FromUnixMicros(1'800'000'000'000'000);

JobRecord RunningJob(bool disable_retries, bool restart_job, int attempt = 0) {
  JobRecord job;
  job.id = 7;
  job.version = 3;
  job.attempt = attempt;
  job.job.state = JobState::kRunning;
  job.job.start_time = kNow - std::chrono::hours(1);
  job.job.job_spec.scheduling = Scheduling{};
  job.job.job_spec.scheduling->disable_retries = disable_retries;
  job.job.job_spec.scheduling->restart_job_on_worker_restart = restart_job;
  return job;
}

TEST(RebootPolicyTest, ReplicasRestartInPlaceByDefault) {
  auto t = OnResourceReboot(RunningJob(false, false), "pr1", std::chrono::seconds(60), kNow, 3);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->to(), JobState::kPending);
  EXPECT_TRUE(t->interrupts_run());
  EXPECT_FALSE(t->run().has_value());  // the same attempt
  EXPECT_NE(t->reason().find("restarts in place"), std::string::npos) << t->reason();
}

TEST(RebootPolicyTest, DisableRetriesFailsTheJobEvenWhenItWouldRestartTheWholeJob) {
  auto t = OnResourceReboot(RunningJob(true, true), "pr1", std::chrono::seconds(60), kNow, 3);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->to(), JobState::kFailed);
  ASSERT_TRUE(t->error().has_value());
  EXPECT_EQ(t->error()->code, 14);
  EXPECT_NE(t->error()->message.find("pr1 is rebooting"), std::string::npos);
}

TEST(RebootPolicyTest, RestartJobOnWorkerRestartRetriesTheWholeJobUpToTheLimit) {
  auto t = OnResourceReboot(RunningJob(false, true, 1), "pr1", std::chrono::seconds(60), kNow, 3);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->to(), JobState::kPending);
  ASSERT_TRUE(t->run().has_value());
  EXPECT_EQ(t->run()->attempt, 2);
  EXPECT_TRUE(t->run()->replicas.empty());  // launched anew
  EXPECT_NE(t->reason().find("retry 2 of 3"), std::string::npos) << t->reason();

  auto last =
      OnResourceReboot(RunningJob(false, true, 3), "pr1", std::chrono::seconds(60), kNow, 3);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->to(), JobState::kFailed);
  EXPECT_NE(last->error()->message.find("already retried 3 times"), std::string::npos);
}

TEST(RebootPolicyTest, AJobNoLongerAdmittedIsLeftAlone) {
  JobRecord job = RunningJob(false, false);
  job.job.state = JobState::kSucceeded;
  EXPECT_FALSE(OnResourceReboot(job, "pr1", std::chrono::seconds(60), kNow, 3).ok());
}

}  // namespace
}  // namespace trainyard
