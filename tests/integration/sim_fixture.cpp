#include "tests/integration/sim_fixture.h"

#include "tests/integration/test_database.h"
#include "workers/sim/fleet_file.h"

namespace trainyard::testing {

void SimFixture::StartFleet(const char* fleet_json) {
  conninfo_ = FreshDatabase();
  auto pool = pg::Pool::Create(conninfo_, 4, std::chrono::milliseconds(2000));
  ASSERT_TRUE(pool.ok()) << pool.status().message();
  pool_ = std::move(pool).value();
  projects_ = std::make_unique<storage::PgProjectRepository>(*pool_);
  store_ = std::make_unique<storage::PgJobStore>(*pool_);
  operations_ = std::make_unique<storage::PgOperationStore>(*pool_);
  resource_store_ = std::make_unique<storage::PgResourceStore>(*pool_);
  service_ = std::make_unique<JobService>(*projects_, *store_, clock_, resource_store_.get());
  operation_service_ = std::make_unique<OperationService>(*projects_, *operations_, clock_);
  resource_service_ = std::make_unique<ResourceService>(*projects_, *resource_store_, clock_);
  auto fleet = sim::ParseFleet(fleet_json, "test");
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
  resource_fleet_ = std::make_unique<storage::PgResourceFleetStore>(*scheduler_store_);
  reconciler_ = std::make_unique<ResourceReconciler>(
      *resource_fleet_, fleet_, [this](const JobRef& job) { return service_->Cancel(job); });
  scheduler_->SetResourceReconciler(reconciler_.get());
  JobExecutorOptions options;
  options.owner = "exec";
  executor_ = std::make_unique<JobExecutor>(*store_, *store_, runtime_, clock_, options);
}

CustomJob SimFixture::CreateGang(const std::string& project, SchedulingStrategy strategy,
                                 int64_t workers, const std::string& run,
                                 std::map<std::string, std::string> labels) {
  CustomJob job;
  job.display_name = "train";
  job.labels = std::move(labels);
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
    if (job.job_spec.worker_pool_specs.empty()) {
      for (const EnvVar& e : primary_env_) pool.container_spec->env.push_back(e);
    }
    if (!checkpoint_interval_.empty()) {
      pool.container_spec->env.push_back({"TRAINYARD_CHECKPOINT_INTERVAL", checkpoint_interval_});
    }
    job.job_spec.worker_pool_specs.push_back(pool);
  }
  job.job_spec.scheduling = Scheduling{};
  job.job_spec.scheduling->strategy = strategy;
  auto created = service_->Create(ParentRef{project, "us-central1"}, job, "");
  EXPECT_TRUE(created.ok()) << created.status().message();
  return created.ok() ? *created : CustomJob{};
}

CustomJob SimFixture::Create(int64_t workers, SchedulingStrategy strategy,
                             const std::string& priority, const std::string& run,
                             const std::string& project) {
  std::map<std::string, std::string> labels;
  if (!priority.empty()) labels["trainyard-priority"] = priority;
  return CreateGang(project, strategy, workers, run, std::move(labels));
}

CustomJob SimFixture::Get(const CustomJob& job, const std::string& project) {
  auto got = service_->Get(
      JobRef{ParentRef{project, "us-central1"}, job.name.substr(job.name.rfind('/') + 1)});
  EXPECT_TRUE(got.ok()) << got.status().message();
  return got.ok() ? *got : CustomJob{};
}

int64_t SimFixture::NodesInState(int state) {
  auto conn = pool_->Acquire();
  auto r = (*conn)->Exec("SELECT count(*) FROM nodes WHERE state = $1::smallint",
                         {std::to_string(state)});
  return r.ok() ? r->GetInt64(0, 0) : -1;
}

std::vector<std::string> SimFixture::StoredLines(JobLogRepository& logs, const CustomJob& job,
                                                 const std::string& task) {
  LogQuery query;
  query.job_id = std::stoll(job.name.substr(job.name.rfind('/') + 1));
  query.project_number = std::stoll(job.name.substr(9, job.name.find('/', 9) - 9));
  query.task_name = task;
  query.page_size = kMaxLogPageSize;
  auto page = logs.List(query);
  EXPECT_TRUE(page.ok()) << page.status().message();
  std::vector<std::string> out;
  if (page.ok()) {
    for (const LogEntry& e : page->entries) out.push_back(e.message);
  }
  return out;
}

void SimFixture::Step() {
  auto pass = scheduler_->RunOnce();
  ASSERT_TRUE(pass.ok()) << pass.status().message();
  ASSERT_TRUE(executor_->RunOnce().ok());
}

}  // namespace trainyard::testing
