#include "workers/sim/sim_runtime.h"

#include <gtest/gtest.h>

#include "services/jobs/gang_network.h"
#include "services/jobs/workload_model.h"

namespace trainyard::sim {
namespace {

using std::chrono::seconds;

const Timestamp kT0 = FromUnixMicros(1'000'000'000'000);

// A chief and one worker on a3-megagpu-8g, running `run` as TRAINYARD_SIM_DURATION.
JobRecord Job(const std::string& run, std::optional<std::string> exit_code = std::nullopt) {
  JobRecord record;
  record.id = 42;
  record.version = 3;
  record.project_number = 100000000001;
  record.job.state = JobState::kPending;
  for (int replicas : {1, 1}) {
    WorkerPoolSpec pool;
    pool.machine_spec = MachineSpec{};
    pool.machine_spec->machine_type = "a3-megagpu-8g";
    pool.machine_spec->accelerator_type = AcceleratorType::kNvidiaH100Mega80gb;
    pool.machine_spec->accelerator_count = 8;
    pool.replica_count = replicas;
    pool.container_spec = ContainerSpec{};
    pool.container_spec->image_uri = "nemo:24.07";
    record.job.job_spec.worker_pool_specs.push_back(pool);
  }
  auto& env = record.job.job_spec.worker_pool_specs[0].container_spec->env;
  env.push_back({"TRAINYARD_SIM_DURATION", run});
  if (exit_code) env.push_back({"TRAINYARD_SIM_EXIT_CODE", *exit_code});
  return record;
}

TEST(SimRuntimeTest, ReplicasRunForTheJobsRunTimeThenThePrimaryExitsWithTheKnob) {
  SimRuntime runtime;
  JobRecord job = Job("100s", "3");
  auto run = runtime.Launch(job, 0, kT0, kNoLeaseDeadline);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->replicas.size(), 2u);
  EXPECT_EQ(run->replicas[0].task_name, "workerpool0-0");
  EXPECT_EQ(run->replicas[1].task_name, "workerpool1-0");
  job.run = *run;
  auto during = runtime.Observe(job, kT0 + seconds(99));
  ASSERT_TRUE(during.ok());
  EXPECT_EQ(during->replicas[0].phase, ReplicaPhase::kRunning);
  EXPECT_EQ(during->next_change, kT0 + seconds(100)) << "the simulator knows exactly when";
  auto after = runtime.Observe(job, kT0 + seconds(100));
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->replicas[0].phase, ReplicaPhase::kExited);
  EXPECT_EQ(after->replicas[0].exit_code, 3);
  EXPECT_EQ(after->replicas[1].exit_code, 0) << "only the primary takes the exit-code knob";
}

// Job("100s") admitted at kT0 onto nodes that take 30 s to boot and pull.
JobRecord AdmittedJob() {
  JobRecord job = Job("100s");
  job.job.trainyard = SchedulingStatus{};
  job.job.trainyard->admitted_at = kT0;
  job.job.trainyard->startup = seconds(30);
  return job;
}

TEST(SimRuntimeTest, RightAfterAdmissionReplicasWaitForTheSimulatedBootAndPull) {
  SimRuntime runtime;
  JobRecord job = AdmittedJob();
  auto run = runtime.Launch(job, 0, kT0 + seconds(10), kNoLeaseDeadline);
  ASSERT_TRUE(run.ok());
  job.run = *run;
  auto booting = runtime.Observe(job, kT0 + seconds(10));
  ASSERT_TRUE(booting.ok());
  EXPECT_EQ(booting->replicas[0].phase, ReplicaPhase::kPending);
  EXPECT_EQ(booting->next_change, kT0 + seconds(30));
  auto up = runtime.Observe(job, kT0 + seconds(30));
  EXPECT_EQ(up->replicas[0].phase, ReplicaPhase::kRunning);
  EXPECT_EQ(up->next_change, kT0 + seconds(130)) << "the run starts when the nodes are up";
}

// A job's start is when the model says its nodes were up, however late the executor launched it:
// model times do not depend on polling or --sim-speed.
TEST(SimRuntimeTest, ALateFirstLaunchStartsWhenTheNodesWereUpNotWhenItWasNoticed) {
  SimRuntime runtime;
  JobRecord job = AdmittedJob();
  job.state_since = kT0;  // PENDING since its admission
  auto run = runtime.Launch(job, 0, kT0 + seconds(45), kNoLeaseDeadline);
  ASSERT_TRUE(run.ok());
  job.run = *run;
  auto seen = runtime.Observe(job, kT0 + seconds(45));
  ASSERT_TRUE(seen.ok());
  EXPECT_EQ(seen->replicas[0].phase, ReplicaPhase::kRunning);
  EXPECT_EQ(seen->replicas[0].running_since, kT0 + seconds(30));
  EXPECT_EQ(seen->next_change, kT0 + seconds(130));
}

// One slow host slows every step of the gang, so the whole run takes longer, not only the slow
// host's metrics.
TEST(SimRuntimeTest, AStragglerSlowsTheWholeGang) {
  JobRecord job = Job("100s");
  auto& env = job.job.job_spec.worker_pool_specs[0].container_spec->env;
  env.push_back({"TRAINYARD_SIM_SLOW_HOST", "1"});
  env.push_back({"TRAINYARD_SIM_SLOW_HOST_FACTOR", "0.5"});
  EXPECT_EQ(SimRunTime(job.job, SimTimings{}), seconds(200));
  env.pop_back();
  EXPECT_EQ(SimRunTime(job.job, SimTimings{}), std::chrono::microseconds(166'666'666))
      << "the default share is 0.6";
}

// A gang spread over blocks all-reduces between racks: a measured run (TRAINYARD_SIM_DURATION)
// already holds its all-reduce inside one block and takes longer only when it crosses blocks.
TEST(SimRuntimeTest, AGangSpreadOverBlocksRunsSlower) {
  JobRecord job = Job("100s");
  job.job.trainyard = SchedulingStatus{};
  job.job.trainyard->pools.push_back(PlacedPoolStatus{});
  job.job.trainyard->pools[0].blocks = 1;
  EXPECT_EQ(SimRunTime(job.job, SimTimings{}), seconds(100));
  job.job.trainyard->pools[0].blocks = 3;
  const Duration spread = SimRunTime(job.job, SimTimings{});
  EXPECT_GT(spread, seconds(100));
  EXPECT_EQ(spread, WithGangNetwork(seconds(100), job.job.job_spec, 3, /*modelled=*/false));
}

// `nodes` nodes of `machine_type` training a 7B model on 10B tokens (the compute model).
JobRecord ModelGang(const std::string& machine_type, int nodes) {
  JobRecord job = Job("100s");
  auto& pools = job.job.job_spec.worker_pool_specs;
  pools.resize(1);
  pools[0].machine_spec->machine_type = machine_type;
  pools[0].machine_spec->accelerator_type = AcceleratorType::kUnspecified;
  pools[0].machine_spec->accelerator_count = 0;
  pools[0].replica_count = nodes;
  pools[0].container_spec->env = {{"TRAINYARD_MODEL_PARAMS", "7e9"},
                                  {"TRAINYARD_TRAIN_TOKENS", "1e10"}};
  return job;
}

// The same compute (16 nodes of H100s) all-reduces at each machine type's GPU NIC bandwidth: A3
// Mega's 1,600 Gb/s finish first, A3 High's 800 later; over 3 blocks later still.
TEST(SimRuntimeTest, A3MegaFinishesASixteenNodeGangBeforeA3High) {
  JobRecord mega = ModelGang("a3-megagpu-8g", 16);
  JobRecord high = ModelGang("a3-highgpu-8g", 16);
  const Duration compute = (*EstimateWorkload(mega.job.job_spec))->run;
  ASSERT_EQ(compute, (*EstimateWorkload(high.job.job_spec))->run) << "the same compute";
  const Duration on_mega = SimRunTime(mega.job, SimTimings{});
  const Duration on_high = SimRunTime(high.job, SimTimings{});
  EXPECT_GT(on_mega, compute) << "a gang pays its all-reduce";
  EXPECT_LT(on_mega, on_high);
  EXPECT_NEAR(std::chrono::duration<double>(on_high - compute).count(),
              2 * std::chrono::duration<double>(on_mega - compute).count(), 1e-3)
      << "half the bandwidth: twice the all-reduce";

  mega.job.trainyard = SchedulingStatus{};
  mega.job.trainyard->pools.push_back(PlacedPoolStatus{});
  mega.job.trainyard->pools[0].blocks = 1;
  const Duration one_block = SimRunTime(mega.job, SimTimings{});
  EXPECT_EQ(one_block, on_mega);
  mega.job.trainyard->pools[0].blocks = 3;
  EXPECT_GT(SimRunTime(mega.job, SimTimings{}), one_block) << "3 blocks run longer than 1";
}

TEST(SimRuntimeTest, AResumedJobRunsOnlyWhatItsCheckpointsDoNotHold) {
  SimRuntime runtime;
  JobRecord job = Job("100s");
  job.checkpointed = seconds(75);
  auto run = runtime.Launch(job, 0, kT0, kNoLeaseDeadline);
  ASSERT_TRUE(run.ok());
  job.run = *run;
  auto seen = runtime.Observe(job, kT0);
  EXPECT_EQ(seen->next_change, kT0 + seconds(25));
  EXPECT_EQ(seen->replicas[0].running_since, kT0) << "the simulator knows when it started";
}

// A run takes its work, a save after every checkpoint interval of it but the last, and, when it
// resumes from a checkpoint, the restore first.
TEST(SimRuntimeTest, CheckpointSavesAndTheRestoreLengthenTheRun) {
  SimRuntime runtime;
  JobRecord job = Job("600s");
  job.checkpoint_interval = seconds(100);
  job.checkpoint_cost = CheckpointCost{seconds(10), seconds(20)};
  job.run = *runtime.Launch(job, 0, kT0, kNoLeaseDeadline);
  EXPECT_EQ(runtime.Observe(job, kT0)->next_change, kT0 + seconds(650)) << "600 s + 5 saves";

  job.checkpointed = seconds(200);
  job.run = *runtime.Launch(job, 0, kT0, kNoLeaseDeadline);
  EXPECT_EQ(runtime.Observe(job, kT0)->next_change, kT0 + seconds(450))
      << "a 20 s restore, the 400 s left and 3 saves";
}

// Each run's first step comes the placement's program start-up after its replicas start.
TEST(SimRuntimeTest, TheProgramsStartupLengthensEveryRun) {
  SimRuntime runtime;
  JobRecord job = AdmittedJob();
  job.job.trainyard->program_startup = seconds(45);
  job.run = *runtime.Launch(job, 0, kT0, kNoLeaseDeadline);
  EXPECT_EQ(runtime.Observe(job, kT0 + seconds(30))->next_change, kT0 + seconds(175))
      << "up at 30 s, the first step at 75 s, 100 s of work";
  job.checkpointed = seconds(60);
  job.state_since = kT0 + seconds(500);  // resumed after a repair on the same placement
  job.run = *runtime.Launch(job, 0, kT0 + seconds(500), kNoLeaseDeadline);
  EXPECT_EQ(runtime.Observe(job, kT0 + seconds(500))->next_change, kT0 + seconds(585))
      << "45 s of start-up again, then the 40 s left";
}

TEST(SimRuntimeTest, AReplicaRestartedInPlaceResumesFromTheLastCheckpoint) {
  SimRuntime runtime;
  JobRecord job = Job("100s");
  job.checkpoint_interval = seconds(30);
  job.job.state = JobState::kRunning;
  job.state_since = kT0;
  job.run = *runtime.Launch(job, 0, kT0, kNoLeaseDeadline);
  // 70s in: two checkpoints (60s of work) are saved, 10s is done again.
  auto handle =
      runtime.RestartReplica(job, job.run->replicas[0], kT0 + seconds(70), kNoLeaseDeadline);
  ASSERT_TRUE(handle.ok());
  EXPECT_EQ(*handle, std::to_string(ToUnixMicros(kT0 + seconds(70))) + ":" +
                         std::to_string(ToUnixMicros(kT0 + seconds(110))))
      << "runs from 70s to 110s: the 40s its checkpoints do not hold";
}

TEST(SimRuntimeTest, ACancellingJobsReplicasAreStopped) {
  SimRuntime runtime;
  JobRecord job = Job("100s");
  job.run = *runtime.Launch(job, 0, kT0, kNoLeaseDeadline);
  job.job.state = JobState::kCancelling;
  auto seen = runtime.Observe(job, kT0 + seconds(1));
  ASSERT_TRUE(seen.ok());
  for (const ReplicaObservation& r : seen->replicas) {
    EXPECT_EQ(r.phase, ReplicaPhase::kExited);
    EXPECT_EQ(r.exit_code, 143);
  }
}

TEST(SimRuntimeTest, ATrainingRunPrintsItsProgressAndAShortOneOnlyItsEnd) {
  SimRuntime runtime;
  JobRecord job = Job("600s");
  job.job.start_time = kT0;
  auto ended =
      JobStateMachine::Transition(JobSnapshot{job.id, job.version, JobState::kRunning, true},
                                  JobState::kSucceeded, kT0 + seconds(600), "done");
  ASSERT_TRUE(ended.ok());
  const JobTransition& done = *ended;
  runtime.Applied(job, done);
  std::vector<LogLine> lines = runtime.CollectLogs(done.at());
  ASSERT_EQ(lines.size(), 13u);  // ten progress lines, two checkpoints, the end
  EXPECT_EQ(lines.front().message.rfind("step 100/1000 loss=", 0), 0u) << lines.front().message;
  EXPECT_EQ(lines.back().message, "training finished");
  EXPECT_EQ(lines.back().task_name, "workerpool0-0");
  EXPECT_EQ(runtime.CollectLogs(done.at()).size(), 13u) << "not stored yet: handed over again";
  runtime.LogsStored();
  EXPECT_TRUE(runtime.CollectLogs(done.at()).empty()) << "stored once";

  JobRecord stub = Job("1s");
  stub.job.start_time = kT0;
  done.at() = kT0 + seconds(1);
  runtime.Applied(stub, done);
  lines = runtime.CollectLogs(done.at());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].message, "training finished");
}

}  // namespace
}  // namespace trainyard::sim
