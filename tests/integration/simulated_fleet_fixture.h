#pragma once
// A whole simulated deployment on a real PostgreSQL, driven by a manual clock: the API's job
// service, the scheduler leader (with the failure simulator in its pass) and one executor over a
// fleet given as JSON. Step() is one leader pass and one executor pass at the current virtual time.
#include <gtest/gtest.h>

#include "services/job_service.h"
#include "storage/pg.h"
#include "storage/pg_failure_store.h"
#include "storage/pg_job_store.h"
#include "storage/pg_project_repository.h"
#include "storage/pg_scheduler_store.h"
#include "tests/integration/test_database.h"
#include "workers/failure_simulator.h"
#include "workers/job_executor.h"
#include "workers/scheduler_loop.h"
#include "workers/sim/fleet_file.h"

namespace trainyard::testing {

class SimulatedFleetTest : public ::testing::Test {
 protected:
  // The fleet file's text.
  virtual const char* FleetJson() const = 0;

  void SetUp() override {
    conninfo_ = FreshDatabase();
    auto pool = pg::Pool::Create(conninfo_, 4, std::chrono::milliseconds(2000));
    ASSERT_TRUE(pool.ok()) << pool.status().message();
    pool_ = std::move(pool).value();
    projects_ = std::make_unique<storage::PgProjectRepository>(*pool_);
    store_ = std::make_unique<storage::PgJobStore>(*pool_);
    operations_ = std::make_unique<storage::PgOperationRepository>(*pool_);
    service_ = std::make_unique<JobService>(*projects_, *store_, *operations_, clock_);
    auto fleet = sim::ParseFleet(FleetJson(), "test");
    ASSERT_TRUE(fleet.ok()) << fleet.status().message();
    fleet_ = std::move(fleet).value();
    scheduler_store_ = std::make_unique<storage::PgSchedulerStore>(conninfo_);
    auto epoch = scheduler_store_->SyncNodes(fleet_, clock_.Now());
    ASSERT_TRUE(epoch.ok()) << epoch.status().message();
    fleet_.SetEpoch(*epoch);
    scheduler_ = std::make_unique<SchedulerLoop>(*scheduler_store_, fleet_, clock_);
    failure_store_ = std::make_unique<storage::PgFailureStore>(*scheduler_store_);
    failures_ = std::make_unique<FailureSimulator>(*failure_store_, fleet_);
    scheduler_->SetFailureSimulator(failures_.get());
    JobExecutorOptions options;
    options.owner = "exec";
    executor_ = std::make_unique<JobExecutor>(*store_, *store_, clock_, options);
  }

  // A job of one primary replica plus `workers` more, all on a3-megagpu-8g.
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
  std::unique_ptr<storage::PgFailureStore> failure_store_;
  std::unique_ptr<FailureSimulator> failures_;
  std::unique_ptr<JobExecutor> executor_;
};

}  // namespace trainyard::testing
