// The executor driving real processes (the local runtime) through the whole stack, as it drives
// the simulator everywhere else: a job's replicas run, their output is its log, their exit codes
// decide its end.
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "storage/pg_job_log_store.h"
#include "tests/integration/sim_fixture.h"
#include "workers/local/local_runtime.h"

namespace trainyard {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr const char* kFleet = R"({
  "seed": 7, "bootTime": {"default": "0s"}, "imagePullGbps": 10, "imageSizeGb": {"default": 0},
  "zones": [{"zone": "us-central1-a", "pools": [
    {"machineType": "n2-standard-8", "model": "ON_DEMAND", "nodes": 4, "pricePerNodeHour": 0.4}]}]})";

class LocalExecutorTest : public testing::SimFixture {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ty-local-executor-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    local::LocalRuntimeOptions options;
    options.root = dir_;
    options.grace = 200ms;
    options.poll = 10ms;
    local_ = std::make_unique<local::LocalRuntime>(options);
    ASSERT_NO_FATAL_FAILURE(StartFleet(kFleet));
    logs_ = &adapters_->logs();
  }
  Runtime& FleetRuntime() override { return *local_; }
  void TearDown() override {
    StopFleet();
    local_.reset();
    std::error_code ec;  // never throws: a keeper may still be finishing its exit code
    fs::remove_all(dir_, ec);
  }

  CustomJob Shell(const std::string& script, bool disable_retries = false) {
    CustomJob job;
    job.display_name = "sh";
    WorkerPoolSpec pool;
    pool.machine_spec = MachineSpec{};
    pool.machine_spec->machine_type = "n2-standard-8";
    pool.replica_count = 1;
    pool.container_spec = ContainerSpec{};
    pool.container_spec->image_uri = "debian:12";
    pool.container_spec->command = {"sh", "-c", script};
    job.job_spec.worker_pool_specs.push_back(pool);
    if (disable_retries) {
      job.job_spec.scheduling = Scheduling{};
      job.job_spec.scheduling->disable_retries = true;
    }
    auto created = service_->Create(ParentRef{"demo", "us-central1"}, job, "");
    EXPECT_TRUE(created.ok()) << created.status().message();
    return created.ok() ? *created : CustomJob{};
  }

  // Steps the scheduler and the executor until the job ends (real processes: a wall deadline).
  JobState RunToEnd(const CustomJob& job) {
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    JobState state = Get(job).state;
    while (!IsTerminal(state) && std::chrono::steady_clock::now() < deadline) {
      clock_.Advance(1s);
      Step();
      state = Get(job).state;
      if (!IsTerminal(state)) std::this_thread::sleep_for(10ms);
    }
    return state;
  }

  fs::path dir_;
  std::unique_ptr<local::LocalRuntime> local_;
  storage::PgJobLogStore* logs_ = nullptr;
};

TEST_F(LocalExecutorTest, AProcessThatSucceedsEndsItsJobSucceededWithItsOutputAsTheLog) {
  CustomJob job = Shell("echo from a real process; echo and a second line");
  ASSERT_EQ(RunToEnd(job), JobState::kSucceeded);
  Step();  // the last lines, once the process is gone
  EXPECT_EQ(StoredLines(*logs_, job),
            (std::vector<std::string>{"from a real process", "and a second line"}));
}

TEST_F(LocalExecutorTest, AProcessThatFailsFailsItsJobWithItsExitCode) {
  CustomJob job = Shell("exit 3", /*disable_retries=*/true);
  ASSERT_EQ(RunToEnd(job), JobState::kFailed);
  EXPECT_EQ(Get(job).error->message,
            "The replica workerpool0-0 exited with a non-zero status of 3.");
}

}  // namespace
}  // namespace trainyard
