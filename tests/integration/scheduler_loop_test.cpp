// The scheduler loop, the executor and the API's job service against a real PostgreSQL, driven by
// a manual clock: what a user sees through GET (state, reason, position, placement, cost) at every
// step of each consumption model's story.
#include <gtest/gtest.h>

#include "services/job_service.h"
#include "storage/pg.h"
#include "storage/pg_job_store.h"
#include "storage/pg_project_repository.h"
#include "storage/pg_scheduler_store.h"
#include "tests/integration/test_database.h"
#include "workers/job_executor.h"
#include "workers/scheduler_loop.h"
#include "workers/sim/fleet_file.h"

namespace trainyard {
namespace {

using namespace std::chrono_literals;

// Zone a: 2 reserved A3 Mega nodes for project demo (warm), 2 on demand, 2 spot, DWS capacity of
// 2 nodes after an hour. Cold boot 60s; a 10 GB image at 10 Gbps pulls in 8s.
constexpr const char* kFleet = R"({
  "bootTime": {"default": "60s"}, "imagePullGbps": 10, "imageSizeGb": {"default": 10},
  "quotas": {"default": {"PREEMPTIBLE_NVIDIA_H100_MEGA_80GB": 16}},
  "zones": [{"zone": "us-central1-a", "pools": [
    {"machineType": "a3-megagpu-8g", "model": "RESERVATION", "reservation": "r1", "term": "1y",
     "projects": ["demo"], "nodes": 2, "pricePerNodeHour": 36},
    {"machineType": "a3-megagpu-8g", "model": "ON_DEMAND", "nodes": 2, "pricePerNodeHour": 90},
    {"machineType": "a3-megagpu-8g", "model": "SPOT", "nodes": 2, "pricePerNodeHour": 18},
    {"machineType": "a3-megagpu-8g", "model": "FLEX_START", "pricePerNodeHour": 45,
     "flexStart": [{"after": "3600s", "nodes": 2}]}]}]})";

class SchedulerLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    conninfo_ = testing::FreshDatabase();
    auto pool = pg::Pool::Create(conninfo_, 4, std::chrono::milliseconds(2000));
    ASSERT_TRUE(pool.ok()) << pool.status().message();
    pool_ = std::move(pool).value();
    projects_ = std::make_unique<storage::PgProjectRepository>(*pool_);
    store_ = std::make_unique<storage::PgJobStore>(*pool_);
    operations_ = std::make_unique<storage::PgOperationRepository>(*pool_);
    service_ = std::make_unique<JobService>(*projects_, *store_, *operations_, clock_);
    auto fleet = sim::ParseFleet(kFleet, "test");
    ASSERT_TRUE(fleet.ok()) << fleet.status().message();
    fleet_ = std::move(fleet).value();
    scheduler_store_ = std::make_unique<storage::PgSchedulerStore>(conninfo_);
    auto epoch = scheduler_store_->SyncNodes(fleet_, clock_.Now());
    ASSERT_TRUE(epoch.ok()) << epoch.status().message();
    fleet_.SetEpoch(*epoch);
    scheduler_ = std::make_unique<SchedulerLoop>(*scheduler_store_, fleet_, clock_);
    JobExecutorOptions options;
    options.owner = "exec";
    executor_ = std::make_unique<JobExecutor>(*store_, *store_, clock_, options);
  }

  CustomJob Create(int64_t workers, SchedulingStrategy strategy, const std::string& priority = "",
                   const std::string& run = "600s", const std::string& project = "demo") {
    CustomJob job;
    job.display_name = "train";
    for (int64_t replicas : {int64_t{1}, workers}) {
      if (replicas == 0) continue;
      WorkerPoolSpec pool;
      pool.machine_spec = MachineSpec{};
      pool.machine_spec->machine_type = "a3-megagpu-8g";
      pool.machine_spec->accelerator_type = AcceleratorType::kNvidiaH100Mega80gb;
      pool.machine_spec->accelerator_count = 8;
      pool.replica_count = replicas;
      pool.container_spec = ContainerSpec{};
      pool.container_spec->image_uri = "nemo:24.07";
      pool.container_spec->env.push_back({"TRAINYARD_SIM_DURATION", run});
      job.job_spec.worker_pool_specs.push_back(pool);
    }
    job.job_spec.scheduling = Scheduling{};
    job.job_spec.scheduling->strategy = strategy;
    if (!priority.empty()) job.labels["trainyard-priority"] = priority;
    auto created = service_->Create(ParentRef{project, "us-central1"}, job, "");
    EXPECT_TRUE(created.ok()) << created.status().message();
    return created.ok() ? *created : CustomJob{};
  }

  CustomJob Get(const CustomJob& job, const std::string& project = "demo") {
    auto got = service_->Get(
        JobRef{ParentRef{project, "us-central1"}, job.name.substr(job.name.rfind('/') + 1)});
    EXPECT_TRUE(got.ok()) << got.status().message();
    return got.ok() ? *got : CustomJob{};
  }

  // One scheduling cycle and one executor pass at the current virtual time.
  void Step() {
    auto pass = scheduler_->RunOnce();
    ASSERT_TRUE(pass.ok()) << pass.status().message();
    ASSERT_TRUE(executor_->RunOnce().ok());
  }

  int64_t NodesInState(int state) {
    auto conn = pool_->Acquire();
    auto r = (*conn)->Exec("SELECT count(*) FROM nodes WHERE state = $1::smallint",
                           {std::to_string(state)});
    return r.ok() ? r->GetInt64(0, 0) : -1;
  }

  std::string conninfo_;
  ManualClock clock_{FromUnixMicros(1'800'000'000'000'000)};
  std::unique_ptr<pg::Pool> pool_;
  std::unique_ptr<storage::PgProjectRepository> projects_;
  std::unique_ptr<storage::PgJobStore> store_;
  std::unique_ptr<storage::PgOperationRepository> operations_;
  std::unique_ptr<JobService> service_;
  Fleet fleet_;
  std::unique_ptr<storage::PgSchedulerStore> scheduler_store_;
  std::unique_ptr<SchedulerLoop> scheduler_;
  std::unique_ptr<JobExecutor> executor_;
};

TEST_F(SchedulerLoopTest, StandardJobRunsOnTheWarmReservationAndPaysItsPrice) {
  CustomJob job = Create(1, SchedulingStrategy::kStandard);  // a 2-node gang
  Step();
  CustomJob admitted = Get(job);
  EXPECT_EQ(admitted.state, JobState::kPending);
  ASSERT_TRUE(admitted.trainyard);
  EXPECT_EQ(admitted.trainyard->reason_code, "ADMITTED");
  EXPECT_EQ(admitted.trainyard->zone, "us-central1-a");
  ASSERT_EQ(admitted.trainyard->pools.size(), 2u);
  EXPECT_EQ(admitted.trainyard->pools[0].consumption_model, "RESERVATION");
  EXPECT_EQ(admitted.trainyard->pools[0].reservation, "r1");
  EXPECT_EQ(admitted.trainyard->hourly_price_usd, 72);
  // Warm nodes: no boot, only the 8s image pull.
  clock_.Advance(7s);
  Step();
  EXPECT_EQ(Get(job).state, JobState::kPending);
  clock_.Advance(1s);
  Step();
  EXPECT_EQ(Get(job).state, JobState::kRunning);
  EXPECT_EQ(NodesInState(3), 2) << "both nodes BUSY";
  clock_.Advance(600s);
  Step();
  CustomJob done = Get(job);
  EXPECT_EQ(done.state, JobState::kSucceeded);
  // 608s of two reserved nodes at $36/h.
  EXPECT_NEAR(done.trainyard->cost_usd, 72.0 * 608 / 3600, 1e-3);
  EXPECT_EQ(NodesInState(2), 2) << "reservation nodes stay READY with the image cached";

  // The next job on the same nodes skips the pull: the image is cached.
  CustomJob again = Create(1, SchedulingStrategy::kStandard);
  Step();
  Step();
  EXPECT_EQ(Get(again).state, JobState::kRunning);
}

TEST_F(SchedulerLoopTest, OnDemandNodesBootColdAndAreGivenBack) {
  CustomJob job = Create(1, SchedulingStrategy::kStandard, "", "60s", "other");
  Step();
  CustomJob admitted = Get(job, "other");
  ASSERT_TRUE(admitted.trainyard);
  EXPECT_EQ(admitted.trainyard->pools[0].consumption_model, "ON_DEMAND");
  EXPECT_EQ(NodesInState(1), 2) << "PROVISIONING";
  clock_.Advance(67s);
  Step();
  EXPECT_EQ(Get(job, "other").state, JobState::kPending) << "boot 60s + pull 8s";
  clock_.Advance(1s);
  Step();
  EXPECT_EQ(Get(job, "other").state, JobState::kRunning);
  clock_.Advance(60s);
  Step();
  EXPECT_EQ(Get(job, "other").state, JobState::kSucceeded);
  EXPECT_EQ(NodesInState(3), 0);
  EXPECT_EQ(NodesInState(1), 0);
}

TEST_F(SchedulerLoopTest, SpotJobQueuesOverPreemptibleQuotaWithItsReasonAndPosition) {
  CustomJob first = Create(0, SchedulingStrategy::kSpot);  // 1 node, 8 GPUs
  clock_.Advance(1s);                                      // queue order is creation order
  CustomJob second = Create(1, SchedulingStrategy::kSpot);  // 2 nodes: 8 + 16 > 16
  Step();
  CustomJob admitted = Get(first);
  ASSERT_TRUE(admitted.trainyard && !admitted.trainyard->pools.empty());
  EXPECT_EQ(admitted.trainyard->pools[0].consumption_model, "SPOT");
  CustomJob waiting = Get(second);
  EXPECT_EQ(waiting.state, JobState::kQueued);
  EXPECT_EQ(waiting.trainyard->reason_code, "QUOTA_EXCEEDED");
  EXPECT_EQ(waiting.trainyard->reason_message,
            "project quota for PREEMPTIBLE_NVIDIA_H100_MEGA_80GB exceeded: 8/16 in use, job needs "
            "16");
  EXPECT_EQ(waiting.trainyard->queue_position, 1);
}

TEST_F(SchedulerLoopTest, HigherPriorityPreemptsAndTheVictimComesBack) {
  CustomJob low = Create(0, SchedulingStrategy::kStandard, "low", "3600s", "other");
  Step();
  clock_.Advance(10s);
  CustomJob low2 = Create(0, SchedulingStrategy::kStandard, "low", "3600s", "other");
  Step();
  clock_.Advance(70s);
  Step();
  ASSERT_EQ(Get(low, "other").state, JobState::kRunning);
  CustomJob high = Create(0, SchedulingStrategy::kStandard, "high", "60s", "other");
  Step();
  CustomJob running = Get(high, "other");
  EXPECT_EQ(running.state, JobState::kPending);
  EXPECT_NE(running.trainyard->reason_message.find("after preempting 1 lower-priority job"),
            std::string::npos);
  // The newest low-priority job was the victim; it waits with its accrued cost.
  CustomJob victim = Get(low2, "other");
  EXPECT_EQ(victim.state, JobState::kQueued);
  EXPECT_GT(victim.trainyard->cost_usd, 0);
  Step();
  EXPECT_EQ(Get(low2, "other").trainyard->reason_code, "NO_CAPACITY");
  clock_.Advance(68s);  // the high job boots (60s) and pulls (8s) on the freed node…
  Step();
  EXPECT_EQ(Get(high, "other").state, JobState::kRunning);
  clock_.Advance(60s);  // …runs 60s and ends
  Step();
  Step();
  EXPECT_EQ(Get(high, "other").state, JobState::kSucceeded);
  EXPECT_EQ(Get(low2, "other").state, JobState::kPending) << "re-admitted on the freed node";
}

TEST_F(SchedulerLoopTest, FlexStartWaitsForDwsCapacityThenRuns) {
  CustomJob job = Create(1, SchedulingStrategy::kFlexStart, "", "60s", "other");
  Step();
  CustomJob waiting = Get(job, "other");
  EXPECT_EQ(waiting.state, JobState::kQueued);
  EXPECT_EQ(waiting.trainyard->reason_code, "WAITING_FOR_DWS");
  clock_.Advance(3600s);
  Step();
  CustomJob admitted = Get(job, "other");
  EXPECT_EQ(admitted.state, JobState::kPending);
  EXPECT_EQ(admitted.trainyard->pools[0].consumption_model, "FLEX_START");
}

TEST_F(SchedulerLoopTest, FlexStartFailsAfterMaxWaitDuration) {
  CustomJob spec;
  spec.display_name = "too-big-for-dws";
  WorkerPoolSpec pool;
  pool.machine_spec = MachineSpec{};
  pool.machine_spec->machine_type = "a3-megagpu-8g";
  pool.machine_spec->accelerator_type = AcceleratorType::kNvidiaH100Mega80gb;
  pool.machine_spec->accelerator_count = 8;
  pool.replica_count = 1;
  pool.container_spec = ContainerSpec{};
  pool.container_spec->image_uri = "nemo";
  spec.job_spec.worker_pool_specs.push_back(pool);
  pool.replica_count = 3;  // 4 nodes: more than DWS will ever offer here
  spec.job_spec.worker_pool_specs.push_back(pool);
  spec.job_spec.scheduling = Scheduling{};
  spec.job_spec.scheduling->strategy = SchedulingStrategy::kFlexStart;
  spec.job_spec.scheduling->max_wait_duration = 1800s;
  auto job = service_->Create(ParentRef{"demo", "us-central1"}, spec, "");
  ASSERT_TRUE(job.ok()) << job.status().message();
  Step();
  clock_.Advance(1800s);
  Step();
  CustomJob failed = Get(*job);
  EXPECT_EQ(failed.state, JobState::kFailed);
  ASSERT_TRUE(failed.error);
  EXPECT_EQ(failed.error->code, 8);
  EXPECT_NE(failed.error->message.find("maxWaitDuration (30m)"), std::string::npos);
}

TEST_F(SchedulerLoopTest, OnlyOneSchedulerLeads) {
  storage::PgSchedulerStore other_store(conninfo_);
  SchedulerLoop other(other_store, fleet_, clock_);
  auto first = scheduler_->RunOnce();
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(first->leading);
  auto second = other.RunOnce();
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->leading);
}

}  // namespace
}  // namespace trainyard
