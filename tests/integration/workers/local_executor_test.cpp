// The executor driving real processes (the local runtime) through the whole stack, as it drives
// the simulator everywhere else: a job's replicas run, their output is its log, their exit codes
// decide its end.
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "services/fleet/fault_injection.h"
#include "storage/pg_fault_injection_store.h"
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
    {"machineType": "n2-standard-8", "model": "ON_DEMAND", "nodes": 4, "pricePerNodeHour": 0.4},
    {"machineType": "n2-standard-8", "model": "SPOT", "nodes": 1, "pricePerNodeHour": 0.1,
     "preemptionsPerNodeHour": 0}]}]})";

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

  CustomJob Shell(const std::string& script, bool disable_retries = false,
                  SchedulingStrategy strategy = SchedulingStrategy::kUnspecified) {
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
    if (disable_retries || strategy != SchedulingStrategy::kUnspecified) {
      job.job_spec.scheduling = Scheduling{};
      job.job_spec.scheduling->disable_retries = disable_retries;
      job.job_spec.scheduling->strategy = strategy;
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

// A spot VM's shutdown script hears the reclaim notice 30 s ahead: under the local runtime the
// job's processes get SIGTERM when the notice is given, while the job still runs, and the reclaim
// that follows requeues the job instead of failing it for the exit.
TEST_F(LocalExecutorTest, ASpotNoticeReachesTheProcessAsSigtermBeforeTheReclaim) {
  CustomJob job = Shell(
      "trap 'echo got SIGTERM; exit 143' TERM; echo started; "
      "while :; do sleep 0.05; done",
      /*disable_retries=*/false, SchedulingStrategy::kSpot);
  auto poll = [&](auto done, std::chrono::microseconds advance) {
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      clock_.Advance(advance);
      Step();
      std::this_thread::sleep_for(10ms);
    }
    return done();
  };
  ASSERT_TRUE(poll(
      [&] {
        const std::vector<std::string> lines = StoredLines(*logs_, job);
        return Get(job).state == JobState::kRunning && !lines.empty();
      },
      1s))
      << "the job never ran";
  CustomJob running = Get(job);
  ASSERT_TRUE(running.trainyard && !running.trainyard->pools.empty() &&
              !running.trainyard->pools[0].nodes.empty());
  storage::PgFaultInjectionStore injections(*pool_);
  FaultInjector injector(fleet_, injections, clock_);
  FaultInjection request;
  request.kind = FaultKind::kSpotPreemption;
  request.node = running.trainyard->pools[0].nodes[0];
  ASSERT_TRUE(injector.Inject(request).ok());
  // 100 ms a step: the notice is given, the job is looked at again, and the reclaim (30 s on)
  // is 300 steps away.
  ASSERT_TRUE(poll(
      [&] {
        const std::vector<std::string> lines = StoredLines(*logs_, job);
        return std::find(lines.begin(), lines.end(), "got SIGTERM") != lines.end();
      },
      100ms))
      << "the process never heard the notice; the job's reason: "
      << (Get(job).trainyard ? Get(job).trainyard->reason_code : std::string("none"));
  CustomJob warned = Get(job);
  EXPECT_EQ(warned.state, JobState::kRunning);
  ASSERT_TRUE(warned.trainyard.has_value());
  EXPECT_EQ(warned.trainyard->reason_code, "SPOT_NOTICE");
  // The reclaim: back to the queue, not FAILED for the exit.
  clock_.Advance(31s);
  ASSERT_TRUE(poll([&] { return Get(job).state != JobState::kRunning; }, 1s))
      << "still RUNNING after the reclaim; its reason: "
      << (Get(job).trainyard
              ? Get(job).trainyard->reason_code + " " + Get(job).trainyard->reason_message
              : std::string("none"));
  const JobState after = Get(job).state;
  EXPECT_TRUE(after == JobState::kQueued || after == JobState::kPending) << static_cast<int>(after);
}

}  // namespace
}  // namespace trainyard
