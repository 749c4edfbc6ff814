#include "services/runtime/job_supervisor.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

using std::chrono::seconds;
using S = JobState;

const Timestamp kNow = FromUnixMicros(1'000'000'000);

// A chief and two workers, RUNNING since kNow - 60 s, launched as attempt `attempt`.
JobRecord Gang(S state, int attempt = 0) {
  JobRecord record;
  record.id = 7;
  record.version = 4;
  record.job.state = state;
  record.job.start_time = kNow - seconds(60);
  for (int replicas : {1, 2}) {
    WorkerPoolSpec pool;
    pool.replica_count = replicas;
    pool.container_spec = ContainerSpec{};
    record.job.job_spec.worker_pool_specs.push_back(pool);
  }
  record.attempt = attempt;
  JobRun run{attempt, {}};
  for (const char* task : {"workerpool0-0", "workerpool1-0", "workerpool1-1"}) {
    run.replicas.push_back(ReplicaRun{task, ReplicaPhase::kRunning, std::nullopt, 0, "h"});
  }
  record.run = run;
  return record;
}

Observation AllRunning(const JobRecord& record) {
  Observation seen;
  for (const ReplicaRun& r : record.run->replicas) {
    seen.replicas.push_back(
        {r.task_name, ReplicaPhase::kRunning, std::nullopt, r.handle, std::nullopt});
  }
  seen.next_change = kNow + seconds(5);
  return seen;
}

Observation WithExit(const JobRecord& record, const std::string& task, int code) {
  Observation seen = AllRunning(record);
  for (ReplicaObservation& r : seen.replicas) {
    if (r.task_name == task) {
      r.phase = ReplicaPhase::kExited;
      r.exit_code = code;
    }
  }
  return seen;
}

TEST(JobSupervisorTest, TheJobRunsOnlyWhenEveryReplicaIsUp) {
  JobRecord record = Gang(S::kPending);
  record.job.start_time.reset();
  Observation seen = AllRunning(record);
  seen.replicas[2].phase = ReplicaPhase::kPending;
  SupervisorVerdict waiting = Supervise(record, seen, kNow);
  EXPECT_FALSE(waiting.transition) << "two of three are up: still PENDING";
  EXPECT_EQ(waiting.look_again, kNow + seconds(5));

  SupervisorVerdict up = Supervise(record, AllRunning(record), kNow);
  ASSERT_TRUE(up.transition);
  EXPECT_EQ(up.transition->to(), S::kRunning);
  EXPECT_EQ(up.transition->start_time(), kNow);
  EXPECT_EQ(up.transition->next_action_at(), kNow + seconds(5));
}

TEST(JobSupervisorTest, TheJobIsRunningFromWhenItsLastReplicaStarted) {
  JobRecord record = Gang(S::kPending);
  record.job.start_time.reset();
  record.job.update_time = kNow - seconds(30);  // launched
  Observation seen = AllRunning(record);
  seen.replicas[0].running_since = kNow - seconds(20);
  seen.replicas[1].running_since = kNow - seconds(10);
  seen.replicas[2].running_since = kNow - seconds(15);
  SupervisorVerdict up = Supervise(record, seen, kNow);
  ASSERT_TRUE(up.transition);
  EXPECT_EQ(up.transition->at(), kNow - seconds(10)) << "not when a pass happened to look";
  EXPECT_EQ(up.transition->start_time(), kNow - seconds(10));

  seen.replicas[1].running_since = kNow - seconds(40);
  seen.replicas[0].running_since = kNow - seconds(40);
  seen.replicas[2].running_since = kNow - seconds(40);
  EXPECT_EQ(Supervise(record, seen, kNow).transition->at(), kNow - seconds(30))
      << "never before the launch it follows";
  seen.replicas[2].running_since.reset();
  EXPECT_EQ(Supervise(record, seen, kNow).transition->at(), kNow)
      << "a replica the runtime cannot date";
}

TEST(JobSupervisorTest, ThePrimaryExitingZeroSucceedsAndStopsTheRest) {
  JobRecord record = Gang(S::kRunning);
  SupervisorVerdict done = Supervise(record, WithExit(record, "workerpool0-0", 0), kNow);
  ASSERT_TRUE(done.transition);
  EXPECT_EQ(done.transition->to(), S::kSucceeded);
  EXPECT_TRUE(done.stop);
  ASSERT_TRUE(done.transition->run());
  EXPECT_EQ(done.transition->run()->replicas[0].exit_code, 0);
}

TEST(JobSupervisorTest, ARunThatEndedBeforeAnyoneLookedIsWrittenStartedAndSucceededInOne) {
  JobRecord record = Gang(S::kPending);
  record.job.start_time.reset();
  record.job.update_time = kNow - seconds(30);  // launched then
  Observation seen = AllRunning(record);
  for (ReplicaObservation& r : seen.replicas) {
    r.phase = ReplicaPhase::kExited;
    r.exit_code = 0;
    r.running_since = kNow - seconds(20);
  }
  seen.next_change.reset();
  SupervisorVerdict done = Supervise(record, seen, kNow);
  ASSERT_TRUE(done.transition) << "a finished run must not stall in PENDING";
  const JobTransition& t = *done.transition;
  EXPECT_EQ(t.from(), S::kPending);
  EXPECT_EQ(t.to(), S::kSucceeded);
  EXPECT_EQ(t.at(), kNow);
  ASSERT_TRUE(t.via()) << "the start is kept as a step of its own";
  EXPECT_EQ(t.via()->state, S::kRunning);
  EXPECT_EQ(t.via()->at, kNow - seconds(20)) << "when its last replica started";
  EXPECT_EQ(t.via()->reason, "all replicas are running");
  EXPECT_EQ(t.start_time(), kNow - seconds(20));
  EXPECT_EQ(t.end_time(), kNow);
  EXPECT_EQ(t.reason(), "the primary replica exited with status 0");
  EXPECT_FALSE(t.next_action_at());
  EXPECT_TRUE(done.stop);
  ASSERT_TRUE(t.run());
  EXPECT_EQ(t.run()->replicas[0].exit_code, 0);
}

TEST(JobSupervisorTest, AStartSaysWhenItsRunSucceedsWhenTheRuntimeKnowsAndNoDeadlineComesFirst) {
  JobRecord record = Gang(S::kPending);
  record.job.start_time.reset();
  Observation seen = AllRunning(record);
  seen.succeeds_at = kNow + seconds(2);
  SupervisorVerdict start = Supervise(record, seen, kNow);
  ASSERT_TRUE(start.transition);
  EXPECT_EQ(start.transition->to(), S::kRunning);
  EXPECT_EQ(start.succeeds_at, kNow + seconds(2));

  record.job.job_spec.scheduling = Scheduling{};
  record.job.job_spec.scheduling->timeout = seconds(1);  // stopped before it would succeed
  EXPECT_FALSE(Supervise(record, seen, kNow).succeeds_at) << "the deadline must be written";
  seen.succeeds_at.reset();
  record.job.job_spec.scheduling.reset();
  EXPECT_FALSE(Supervise(record, seen, kNow).succeeds_at);
}

TEST(JobSupervisorTest, AWorkerThatExitsZeroFirstIsNotAFailure) {
  JobRecord record = Gang(S::kRunning);
  SupervisorVerdict verdict = Supervise(record, WithExit(record, "workerpool1-1", 0), kNow);
  EXPECT_FALSE(verdict.transition);
}

TEST(JobSupervisorTest, AFailedWorkerRestartsInPlaceFiveTimesThenTheJobIsRetried) {
  JobRecord record = Gang(S::kRunning);
  for (int restart = 1; restart <= 5; ++restart) {
    SupervisorVerdict verdict = Supervise(record, WithExit(record, "workerpool1-0", 1), kNow);
    ASSERT_TRUE(verdict.transition) << restart;
    EXPECT_EQ(verdict.transition->to(), S::kRunning) << "the job stays RUNNING";
    EXPECT_EQ(verdict.restart, std::vector<std::string>{"workerpool1-0"});
    EXPECT_NE(verdict.transition->reason().find(std::to_string(restart) + " of 5"),
              std::string::npos)
        << verdict.transition->reason();
    ASSERT_TRUE(verdict.transition->run());
    JobRun next = *verdict.transition->run();
    next.replicas.at(1).phase = ReplicaPhase::kRunning;  // the restarted replica is up again
    record.run = std::move(next);
  }
  SupervisorVerdict retry = Supervise(record, WithExit(record, "workerpool1-0", 1), kNow);
  ASSERT_TRUE(retry.transition);
  EXPECT_EQ(retry.transition->to(), S::kPending);
  EXPECT_TRUE(retry.transition->stops_replicas());
  EXPECT_TRUE(retry.stop);
  ASSERT_TRUE(retry.transition->run());
  EXPECT_EQ(retry.transition->run()->attempt, 1);
  EXPECT_EQ(retry.transition->next_action_at(), kNow) << "relaunched at once";
  EXPECT_TRUE(retry.transition->interrupts_run()) << "the retry resumes from the last checkpoint";
}

TEST(JobSupervisorTest, AfterThreeRetriesTheJobFailsNamingTheReplicaAndItsCode) {
  JobRecord record = Gang(S::kRunning, /*attempt=*/3);
  for (ReplicaRun& r : record.run->replicas) r.restarts = 5;
  SupervisorVerdict failed = Supervise(record, WithExit(record, "workerpool1-1", 2), kNow);
  ASSERT_TRUE(failed.transition);
  EXPECT_EQ(failed.transition->to(), S::kFailed);
  ASSERT_TRUE(failed.transition->error());
  EXPECT_EQ(failed.transition->error()->message,
            "The replica workerpool1-1 exited with a non-zero status of 2.");
  EXPECT_TRUE(failed.stop);
}

TEST(JobSupervisorTest, SigabrtAndSigsegvRetryTheWholeJobAtOnce) {
  for (int code : {134, 139}) {
    JobRecord record = Gang(S::kRunning);
    SupervisorVerdict verdict = Supervise(record, WithExit(record, "workerpool1-0", code), kNow);
    ASSERT_TRUE(verdict.transition);
    EXPECT_EQ(verdict.transition->to(), S::kPending) << code;
    EXPECT_TRUE(verdict.restart.empty());
    EXPECT_EQ(verdict.transition->run()->attempt, 1);
  }
}

TEST(JobSupervisorTest, RestartJobOnWorkerRestartRestartsEveryReplica) {
  JobRecord record = Gang(S::kRunning);
  record.job.job_spec.scheduling = Scheduling{};
  record.job.job_spec.scheduling->restart_job_on_worker_restart = true;
  SupervisorVerdict verdict = Supervise(record, WithExit(record, "workerpool1-0", 1), kNow);
  ASSERT_TRUE(verdict.transition);
  EXPECT_EQ(verdict.restart.size(), 3u);
  for (const ReplicaRun& r : verdict.transition->run()->replicas) EXPECT_EQ(r.restarts, 1);
}

TEST(JobSupervisorTest, DisableRetriesFailsAtTheFirstNonZeroExit) {
  JobRecord record = Gang(S::kRunning);
  record.job.job_spec.scheduling = Scheduling{};
  record.job.job_spec.scheduling->disable_retries = true;
  record.job.job_spec.scheduling->restart_job_on_worker_restart = true;  // forced off
  SupervisorVerdict verdict = Supervise(record, WithExit(record, "workerpool0-0", 1), kNow);
  ASSERT_TRUE(verdict.transition);
  EXPECT_EQ(verdict.transition->to(), S::kFailed);
  EXPECT_TRUE(verdict.restart.empty());
}

TEST(JobSupervisorTest, ALostReplicaRetriesTheJob) {
  JobRecord record = Gang(S::kRunning);
  Observation seen = AllRunning(record);
  seen.replicas[2].phase = ReplicaPhase::kLost;
  SupervisorVerdict verdict = Supervise(record, seen, kNow);
  ASSERT_TRUE(verdict.transition);
  EXPECT_EQ(verdict.transition->to(), S::kPending);
}

TEST(JobSupervisorTest, TheTimeoutCountsFromTheFirstStartAndStopsTheJob) {
  JobRecord record = Gang(S::kRunning);
  record.job.job_spec.scheduling = Scheduling{};
  record.job.job_spec.scheduling->timeout = seconds(100);
  SupervisorVerdict early = Supervise(record, AllRunning(record), kNow + seconds(39));
  EXPECT_FALSE(early.transition);
  EXPECT_EQ(early.look_again, kNow + seconds(5)) << "the runtime's next change comes first";
  SupervisorVerdict late = Supervise(record, AllRunning(record), kNow + seconds(40));
  ASSERT_TRUE(late.transition);
  EXPECT_EQ(late.transition->to(), S::kFailed);
  EXPECT_EQ(late.transition->error()->code, 4);
  EXPECT_NE(late.transition->error()->message.find("100s"), std::string::npos);
  EXPECT_TRUE(late.stop);
}

// Compute Engine stops a flex-start VM seven days after it was provisioned: a job on DWS capacity
// ends then, though its scheduling.timeout (7 days from its start, after boot and pull) is later.
TEST(JobSupervisorTest, AJobOnFlexStartVmsStopsSevenDaysAfterItsAdmission) {
  using std::chrono::hours;
  JobRecord record = Gang(S::kRunning);
  record.job.job_spec.scheduling = Scheduling{};
  record.job.job_spec.scheduling->timeout = hours(24 * 7);
  record.job.trainyard = SchedulingStatus{};
  record.job.trainyard->admitted_at = kNow - seconds(60) - seconds(400);  // boot and pull: 400 s
  PlacedPoolStatus pool;
  pool.consumption_model = "FLEX_START";
  record.job.trainyard->pools.push_back(pool);
  const Timestamp vm_end = *record.job.trainyard->admitted_at + hours(24 * 7);
  EXPECT_EQ(RunDeadline(record.job), vm_end);
  EXPECT_FALSE(Supervise(record, AllRunning(record), vm_end - seconds(1)).transition);
  SupervisorVerdict stopped = Supervise(record, AllRunning(record), vm_end);
  ASSERT_TRUE(stopped.transition);
  EXPECT_EQ(stopped.transition->to(), S::kFailed);
  EXPECT_EQ(stopped.transition->error()->code, 4);
  EXPECT_NE(stopped.transition->error()->message.find("7 days"), std::string::npos)
      << stopped.transition->error()->message;

  record.job.trainyard->pools[0].consumption_model = "ON_DEMAND";
  EXPECT_EQ(RunDeadline(record.job), *record.job.start_time + hours(24 * 7))
      << "on-demand VMs run to the job's own timeout";
}

TEST(JobSupervisorTest, ACancelledJobIsCancelledOnceNoReplicaRuns) {
  JobRecord record = Gang(S::kCancelling);
  SupervisorVerdict stopping = Supervise(record, AllRunning(record), kNow);
  EXPECT_FALSE(stopping.transition);
  EXPECT_TRUE(stopping.stop);
  Observation gone = AllRunning(record);
  for (ReplicaObservation& r : gone.replicas) {
    r.phase = ReplicaPhase::kExited;
    r.exit_code = 143;
  }
  SupervisorVerdict cancelled = Supervise(record, gone, kNow);
  ASSERT_TRUE(cancelled.transition);
  EXPECT_EQ(cancelled.transition->to(), S::kCancelled);
  EXPECT_EQ(cancelled.transition->error()->code, 1);
  JobRecord queued = Gang(S::kCancelling);
  queued.run.reset();
  EXPECT_EQ(Supervise(queued, std::nullopt, kNow).transition->to(), S::kCancelled)
      << "a job cancelled before it launched has nothing to stop";
}

TEST(JobSupervisorTest, AJustLaunchedJobStoresItsRunBeforeItRuns) {
  JobRecord record = Gang(S::kPending);
  record.run.reset();
  record.job.start_time.reset();
  Observation seen;
  for (const char* task : {"workerpool0-0", "workerpool1-0", "workerpool1-1"}) {
    seen.replicas.push_back(
        {task, ReplicaPhase::kPending, std::nullopt, std::string("pid:") + task, std::nullopt});
  }
  SupervisorVerdict verdict = Supervise(record, seen, kNow);
  ASSERT_TRUE(verdict.transition);
  EXPECT_EQ(verdict.transition->to(), S::kPending);
  ASSERT_TRUE(verdict.transition->run());
  EXPECT_EQ(verdict.transition->run()->replicas.size(), 3u);
  EXPECT_EQ(verdict.transition->run()->replicas[2].handle, "pid:workerpool1-1");
}

// The runtime's reason (Slurm's pending reason) becomes the job's while its replicas wait, once;
// when they start it gives way.
TEST(JobSupervisorTest, TheRuntimesWordOnWaitingReplicasIsTheJobsReasonUntilTheyStart) {
  JobRecord record = Gang(S::kPending);
  record.job.start_time.reset();
  Observation seen = AllRunning(record);
  for (ReplicaObservation& r : seen.replicas) r.phase = ReplicaPhase::kPending;
  seen.waiting = "Slurm job 12 is PENDING (Resources)";
  SupervisorVerdict verdict = Supervise(record, seen, kNow);
  ASSERT_TRUE(verdict.transition);
  EXPECT_EQ(verdict.transition->to(), S::kPending);
  ASSERT_TRUE(verdict.transition->note());
  EXPECT_EQ(verdict.transition->note()->code, kRuntimeWaiting);
  EXPECT_EQ(verdict.transition->note()->message, "Slurm job 12 is PENDING (Resources)");
  EXPECT_EQ(verdict.transition->next_action_at(), kNow + seconds(5));

  record.job.trainyard = SchedulingStatus{};
  record.job.trainyard->reason_code = std::string(kRuntimeWaiting);
  record.job.trainyard->reason_message = "Slurm job 12 is PENDING (Resources)";
  EXPECT_FALSE(Supervise(record, seen, kNow).transition) << "said once, not every look";

  verdict = Supervise(record, AllRunning(record), kNow);
  ASSERT_TRUE(verdict.transition);
  EXPECT_EQ(verdict.transition->to(), S::kRunning);
  ASSERT_TRUE(verdict.transition->note());
  EXPECT_EQ(verdict.transition->note()->code, "ADMITTED");
}

TEST(JobSupervisorTest, AnUnreachableRuntimeIsTheJobsReasonOnceAndClearsWhenItAnswers) {
  JobRecord record = Gang(S::kRunning);
  auto noted = RuntimeUnavailable(record, kNow, "slurmrestd at http://x cannot be reached");
  ASSERT_TRUE(noted);
  EXPECT_EQ(noted->to(), S::kRunning) << "the job keeps its state";
  ASSERT_TRUE(noted->note());
  EXPECT_EQ(noted->note()->code, kRuntimeUnavailable);
  EXPECT_NE(noted->note()->message.find("slurmrestd at http://x cannot be reached"),
            std::string::npos);
  EXPECT_EQ(noted->next_action_at(), kNow) << "never left without a next look";

  record.job.trainyard = SchedulingStatus{};
  record.job.trainyard->reason_code = std::string(kRuntimeUnavailable);
  EXPECT_FALSE(RuntimeUnavailable(record, kNow, "still down")) << "said once";
  SupervisorVerdict back = Supervise(record, AllRunning(record), kNow);
  ASSERT_TRUE(back.transition);
  EXPECT_EQ(back.transition->to(), S::kRunning);
  ASSERT_TRUE(back.transition->note());
  EXPECT_EQ(back.transition->note()->code, "ADMITTED");
  EXPECT_FALSE(RuntimeUnavailable(Gang(S::kSucceeded), kNow, "x")) << "only live jobs";
}

// A stop notice (a spot reclaim's 30 s) warns the replicas; one that saves and exits meanwhile is
// no failure to restart or retry: the reclaim that follows requeues the job.
TEST(JobSupervisorTest, UnderAStopNoticeTheReplicasAreWarnedAndAnExitWaitsForTheStop) {
  JobRecord record = Gang(S::kRunning);
  SupervisorVerdict calm = Supervise(record, WithExit(record, "workerpool1-0", 143), kNow);
  EXPECT_FALSE(calm.notice);
  ASSERT_TRUE(calm.transition.has_value());  // without a notice: restarted in place
  EXPECT_EQ(calm.restart, std::vector<std::string>{"workerpool1-0"});

  for (const char* code : {"SPOT_NOTICE", "WINDOW_END", "PREEMPTION_NOTICE"}) {
    record.job.trainyard = SchedulingStatus{};
    record.job.trainyard->reason_code = code;
    SupervisorVerdict running = Supervise(record, AllRunning(record), kNow);
    EXPECT_TRUE(running.notice) << code;
    SupervisorVerdict exited = Supervise(record, WithExit(record, "workerpool1-0", 143), kNow);
    EXPECT_TRUE(exited.notice) << code;
    EXPECT_FALSE(exited.transition.has_value()) << code;
    EXPECT_TRUE(exited.restart.empty()) << code;
    EXPECT_FALSE(exited.stop) << code;
    ASSERT_TRUE(exited.look_again.has_value()) << code;
    // The primary exiting 0 still ends the job: it finished before the stop.
    SupervisorVerdict done = Supervise(record, WithExit(record, "workerpool0-0", 0), kNow);
    ASSERT_TRUE(done.transition.has_value()) << code;
    EXPECT_EQ(done.transition->to(), S::kSucceeded) << code;
  }
}

}  // namespace
}  // namespace trainyard
