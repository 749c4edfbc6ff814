#include "tests/integration/sim_fixture.h"

#include "api/wire/fleet_codec.h"
#include "tests/integration/test_database.h"

namespace trainyard::testing {

void SimFixture::StartFleet(const char* fleet_json) {
  conninfo_ = FreshDatabase();
  auto pool = pg::Pool::Create(conninfo_, 4, std::chrono::milliseconds(2000));
  ASSERT_TRUE(pool.ok()) << pool.status().message();
  pool_ = std::move(pool).value();
  auto fleet = ParseFleet(fleet_json, "test");
  ASSERT_TRUE(fleet.ok()) << fleet.status().message();
  fleet_ = std::move(fleet).value();
  adapters_ = std::make_unique<app::PgAdapters>(*pool_, conninfo_, JobLogRetention{});
  app::ControlPlanePorts ports = adapters_->ports();
  AdjustPorts(ports);
  app::ControlPlaneOptions options;
  options.operation_waiters = 8;
  options.executor.owner = "exec";
  options.ids = &ids_;
  options.scheduler.positions_period = positions_period_;
  // As serve does: only the simulator's start-up and run ends are the model's.
  options.scheduler.simulated_startup = &FleetRuntime() == &runtime_;
  auto plane = app::ControlPlane::Build(ports, fleet_, clock_, FleetRuntime(), options);
  ASSERT_TRUE(plane.ok()) << plane.status().message();
  plane_ = std::move(plane).value();
  projects_ = &adapters_->projects();
  store_ = &adapters_->jobs();
  operations_ = &adapters_->operations();
  resource_store_ = &adapters_->resources();
  scheduler_store_ = &adapters_->scheduler();
  service_ = &plane_->jobs();
  operation_service_ = &plane_->operations();
  resource_service_ = &plane_->resources();
  scheduler_ = &plane_->scheduler();
  failures_ = &plane_->failures();
  reconciler_ = &plane_->reconciler();
  executor_ = &plane_->executor();
}

void SimFixture::StopFleet() {
  plane_.reset();
  adapters_.reset();
  pool_.reset();
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

void SimFixture::WaitForFeed() { ASSERT_EQ(AwaitChangeFeed(conninfo_), ""); }

void SimFixture::Step() {
  ASSERT_NO_FATAL_FAILURE(WaitForFeed());
  auto pass = scheduler_->RunOnce();
  ASSERT_TRUE(pass.ok()) << pass.status().message();
  ASSERT_TRUE(executor_->RunOnce().ok());
}

}  // namespace trainyard::testing
