#include "workers/sim/stand_in_runtime.h"

#include <gtest/gtest.h>

namespace trainyard::sim {
namespace {

using std::chrono::seconds;

CustomJob JobWithEnv(std::vector<EnvVar> env) {
  CustomJob job;
  WorkerPoolSpec pool;
  pool.container_spec = ContainerSpec{};
  pool.container_spec->env = std::move(env);
  job.job_spec.worker_pool_specs.push_back(pool);
  return job;
}

TEST(StandInRuntimeTest, WalksTheLifecycleWithItsTimings) {
  CustomJob job = JobWithEnv({});
  StandInTimings timings;
  Timestamp now = FromUnixMicros(0);
  job.state = JobState::kQueued;
  EXPECT_FALSE(NextStep(job, now, timings)) << "the scheduler admits queued jobs";
  job.state = JobState::kPending;
  auto step = NextStep(job, now, timings);
  ASSERT_TRUE(step);
  EXPECT_EQ(step->to, JobState::kRunning);
  EXPECT_EQ(step->next_action_at, now + seconds(10));
  job.state = JobState::kRunning;
  step = NextStep(job, now, timings);
  EXPECT_EQ(step->to, JobState::kSucceeded);
  EXPECT_FALSE(step->next_action_at);
  job.state = JobState::kSucceeded;
  EXPECT_FALSE(NextStep(job, now, timings));
}

TEST(StandInRuntimeTest, AJobLongerThanItsTimeoutFailsAtTheTimeout) {
  CustomJob job = JobWithEnv({{"TRAINYARD_SIM_DURATION", "100s"}});
  job.job_spec.scheduling = Scheduling{};
  job.job_spec.scheduling->timeout = seconds(30);
  StandInTimings timings;
  Timestamp now = FromUnixMicros(0);
  job.state = JobState::kPending;
  auto step = NextStep(job, now, timings);
  ASSERT_TRUE(step);
  EXPECT_EQ(step->next_action_at, now + seconds(30));
  job.state = JobState::kRunning;
  job.start_time = now;
  step = NextStep(job, now + seconds(30), timings);
  ASSERT_TRUE(step);
  EXPECT_EQ(step->to, JobState::kFailed);
  ASSERT_TRUE(step->error);
  EXPECT_EQ(step->error->code, 4);  // DEADLINE_EXCEEDED
  EXPECT_NE(step->error->message.find("timeout of 30s"), std::string::npos);

  // Restarted after a preemption, it still ends at first start + timeout.
  job.state = JobState::kPending;
  step = NextStep(job, now + seconds(20), timings, seconds(25));
  ASSERT_TRUE(step);
  EXPECT_EQ(step->next_action_at, now + seconds(30));
}

TEST(StandInRuntimeTest, WithoutATimeoutSevenDaysIsTheCap) {
  CustomJob job = JobWithEnv({{"TRAINYARD_SIM_DURATION", "691200s"}});  // 8 days
  job.state = JobState::kPending;
  Timestamp now = FromUnixMicros(0);
  auto step = NextStep(job, now, StandInTimings{});
  ASSERT_TRUE(step);
  EXPECT_EQ(step->next_action_at, now + std::chrono::hours(24 * 7));
}

TEST(StandInRuntimeTest, AJobThatFitsItsTimeoutRunsItsFullTime) {
  CustomJob job = JobWithEnv({{"TRAINYARD_SIM_DURATION", "30s"}});
  job.job_spec.scheduling = Scheduling{};
  job.job_spec.scheduling->timeout = seconds(30);
  job.state = JobState::kPending;
  Timestamp now = FromUnixMicros(0);
  auto step = NextStep(job, now, StandInTimings{}, seconds(20));
  ASSERT_TRUE(step);
  EXPECT_EQ(step->next_action_at, now + seconds(20));  // resumed work is not cut short
  job.state = JobState::kRunning;
  EXPECT_EQ(NextStep(job, now + seconds(20), StandInTimings{})->to, JobState::kSucceeded);
}

TEST(StandInRuntimeTest, KnobsSetDurationAndExitCode) {
  CustomJob job =
      JobWithEnv({{"TRAINYARD_SIM_DURATION", "1.5s"}, {"TRAINYARD_SIM_EXIT_CODE", "3"}});
  job.state = JobState::kPending;
  auto step = NextStep(job, FromUnixMicros(0), {});
  EXPECT_EQ(step->next_action_at, FromUnixMicros(1'500'000));
  job.state = JobState::kRunning;
  step = NextStep(job, FromUnixMicros(0), {});
  EXPECT_EQ(step->to, JobState::kFailed);
  ASSERT_TRUE(step->error);
  EXPECT_NE(step->error->message.find("non-zero status of 3"), std::string::npos);
}

TEST(StandInRuntimeTest, ARestartedJobRunsOnlyWhatItHadLeft) {
  CustomJob job = JobWithEnv({{"TRAINYARD_SIM_DURATION", "600s"}});
  job.state = JobState::kPending;
  auto step = NextStep(job, FromUnixMicros(0), {}, seconds(470));
  ASSERT_TRUE(step);
  EXPECT_EQ(step->to, JobState::kRunning);
  EXPECT_EQ(step->next_action_at, FromUnixMicros(0) + seconds(470));
  EXPECT_EQ(step->reason, "all replicas are running again, resuming from the last checkpoint");
}

TEST(StandInRuntimeTest, ABadDurationFallsBackAndPythonPackagesHaveKnobsToo) {
  CustomJob job = JobWithEnv({{"TRAINYARD_SIM_DURATION", "soon"}});
  job.state = JobState::kPending;
  EXPECT_EQ(NextStep(job, FromUnixMicros(0), {})->next_action_at, FromUnixMicros(0) + seconds(10));
  CustomJob python;
  WorkerPoolSpec pool;
  pool.python_package_spec = PythonPackageSpec{};
  pool.python_package_spec->env = {{"TRAINYARD_SIM_DURATION", "2s"}};
  python.job_spec.worker_pool_specs.push_back(pool);
  python.state = JobState::kPending;
  EXPECT_EQ(NextStep(python, FromUnixMicros(0), {})->next_action_at,
            FromUnixMicros(0) + seconds(2));
}

TEST(StandInRuntimeTest, CancellingEndsCancelledWithCodeOne) {
  CustomJob job = JobWithEnv({});
  job.state = JobState::kCancelling;
  auto step = NextStep(job, FromUnixMicros(0), {});
  EXPECT_EQ(step->to, JobState::kCancelled);
  EXPECT_EQ(step->error->code, 1);
}

}  // namespace
}  // namespace trainyard::sim
