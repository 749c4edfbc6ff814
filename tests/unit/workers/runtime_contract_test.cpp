// The Runtime port's contract (services/runtime/runtime.h), which every runtime passes: the
// executor relies on each of these, whatever runs the replicas. A harness per runtime says how a
// job's replicas are asked to end, how time passes, and what a replica's output line looks like:
// the simulator (virtual time), local processes (real ones: polled with a deadline), and Slurm
// (the real runtime over a cluster in memory, whose tasks the harness plays).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <thread>

#include "tests/unit/workers/slurm/fake_slurm.h"
#include "workers/local/local_runtime.h"
#include "workers/sim/sim_runtime.h"
#include "workers/slurm/slurm_runtime.h"

namespace trainyard {
namespace {
namespace fs = std::filesystem;
using std::chrono::seconds;

const Timestamp kT0 = FromUnixMicros(1'000'000'000'000);

// What a test asks of a job: its primary prints `line` and exits with `exit_code` (then the
// other replica exits 0), or both run until stopped.
struct Script {
  bool runs_until_stopped = false;
  int exit_code = 0;
};

class Harness {
 public:
  virtual ~Harness() = default;
  virtual Runtime& runtime() = 0;
  // A job of two pools, a replica each, doing `script`.
  virtual JobRecord Job(int64_t id, const Script& script) = 0;
  virtual Timestamp Now() = 0;
  // Lets the job's replicas do what their script says (and time pass), for `run`.
  virtual void Play(const JobRecord& job) = 0;
  // The line the primary of a finished job printed.
  virtual std::string PrintedLine() const = 0;
  // Tells the runtime the job ended (what the executor does after its transition).
  void Ended(const JobRecord& job) {
    auto done =
        JobStateMachine::Transition(JobSnapshot{job.id, job.version, JobState::kRunning, true},
                                    JobState::kSucceeded, Now(), "done");
    ASSERT_TRUE(done.ok());
    runtime().Applied(job, *done);
  }
};

JobRecord TwoPoolJob(int64_t id) {
  JobRecord record;
  record.id = id;
  record.version = 1;
  record.project_number = 100000000001;
  record.job.name = "projects/100000000001/locations/us-central1/customJobs/" + std::to_string(id);
  record.job.state = JobState::kPending;
  record.job.start_time = kT0;
  for (int pool = 0; pool < 2; ++pool) {
    WorkerPoolSpec spec;
    spec.machine_spec = MachineSpec{};
    spec.machine_spec->machine_type = "n2-standard-8";
    spec.replica_count = 1;
    spec.container_spec = ContainerSpec{};
    spec.container_spec->image_uri = "debian:12";
    record.job.job_spec.worker_pool_specs.push_back(spec);
  }
  record.job.trainyard = SchedulingStatus{};
  for (int pool = 0; pool < 2; ++pool) {
    PlacedPoolStatus placed;
    placed.pool_id = "us-central1-a/n2";
    placed.machine_type = "n2-standard-8";
    record.job.trainyard->pools.push_back(placed);
  }
  return record;
}

class SimHarness : public Harness {
 public:
  Runtime& runtime() override { return runtime_; }
  JobRecord Job(int64_t id, const Script& script) override {
    JobRecord job = TwoPoolJob(id);
    auto& env = job.job.job_spec.worker_pool_specs[0].container_spec->env;
    env.push_back({"TRAINYARD_SIM_DURATION", script.runs_until_stopped ? "86400s" : "10s"});
    env.push_back({"TRAINYARD_SIM_EXIT_CODE", std::to_string(script.exit_code)});
    return job;
  }
  Timestamp Now() override { return now_; }
  void Play(const JobRecord&) override { now_ += seconds(10); }
  std::string PrintedLine() const override { return "training finished"; }

 private:
  sim::SimRuntime runtime_;
  Timestamp now_ = kT0;
};

fs::path TestDir(const std::string& kind) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(info->name()) + "-" + kind;
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  fs::path dir =
      fs::temp_directory_path() / ("ty-contract-" + std::to_string(getpid()) + "-" + name);
  fs::remove_all(dir);
  return dir;
}

class LocalHarness : public Harness {
 public:
  LocalHarness() : dir_(TestDir("local")) {
    local::LocalRuntimeOptions options;
    options.root = dir_;
    options.grace = std::chrono::milliseconds(200);
    runtime_ = std::make_unique<local::LocalRuntime>(options);
  }
  ~LocalHarness() override {
    // Every replica gone first (a stopped one's keeper still writes its exit code), then the files.
    runtime_->Shutdown({11, 12, 13, 14, 15, 16});
    runtime_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  Runtime& runtime() override { return *runtime_; }
  JobRecord Job(int64_t id, const Script& script) override {
    JobRecord job = TwoPoolJob(id);
    const std::string primary = script.runs_until_stopped
                                    ? "exec sleep 300"
                                    : "echo printed-line; exit " + std::to_string(script.exit_code);
    job.job.job_spec.worker_pool_specs[0].container_spec->command = {"sh", "-c", primary};
    job.job.job_spec.worker_pool_specs[1].container_spec->command = {
        "sh", "-c", script.runs_until_stopped ? "exec sleep 300" : "exit 0"};
    return job;
  }
  Timestamp Now() override { return kT0; }
  void Play(const JobRecord&) override {}  // real processes: they do it themselves
  std::string PrintedLine() const override { return "printed-line"; }

 private:
  fs::path dir_;
  std::unique_ptr<local::LocalRuntime> runtime_;
};

class SlurmHarness : public Harness {
 public:
  SlurmHarness() : dir_(TestDir("slurm")) {
    auto fake = std::make_unique<slurm::FakeSlurm>();
    slurm_ = fake.get();
    slurm::SlurmRuntimeOptions options;
    options.shared_dir = dir_ / "shared";
    options.state_dir = dir_ / "state";
    options.user = "alice";
    options.tag_key = "secret";
    options.partition_of_pool = {{"us-central1-a/n2", "cpu"}};
    options.poll = std::chrono::milliseconds(0);
    options.launch_lookup_age = std::chrono::milliseconds(0);
    runtime_ = std::make_unique<slurm::SlurmRuntime>(std::move(fake), options);
  }
  ~SlurmHarness() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  Runtime& runtime() override { return *runtime_; }
  JobRecord Job(int64_t id, const Script& script) override {
    scripts_[id] = script;
    JobRecord job = TwoPoolJob(id);
    for (auto& pool : job.job.job_spec.worker_pool_specs) pool.container_spec->command = {"true"};
    return job;
  }
  Timestamp Now() override { return kT0; }
  // The cluster's part: the tasks start, and (unless they run until stopped) print and exit.
  void Play(const JobRecord& job) override {
    const Script& script = scripts_[job.id];
    const int attempt = job.run ? job.run->attempt : 0;
    for (const char* task : {"workerpool0-0", "workerpool1-0"}) {
      const fs::path dir = runtime_->AttemptDir(job.id, attempt) / task;
      fs::create_directories(dir);
      std::ofstream(dir / "started.0") << "";
      if (script.runs_until_stopped) continue;
      const bool primary = std::string(task) == "workerpool0-0";
      if (primary) std::ofstream(dir / "output.log", std::ios::app) << "printed-line\n";
      std::ofstream(dir / "exit.0") << (primary ? script.exit_code : 0) << "\n";
    }
    for (slurm::SlurmJob& j : slurm_->jobs) {
      if (j.name == runtime_->SlurmJobName(job.id, attempt) && j.state != "CANCELLED") {
        j.state = script.runs_until_stopped ? "RUNNING" : "COMPLETED";
      }
    }
  }
  std::string PrintedLine() const override { return "printed-line"; }

 private:
  fs::path dir_;
  slurm::FakeSlurm* slurm_ = nullptr;
  std::unique_ptr<slurm::SlurmRuntime> runtime_;
  std::map<int64_t, Script> scripts_;
};

using Factory = std::function<std::unique_ptr<Harness>()>;

class RuntimeContractTest : public ::testing::TestWithParam<std::pair<const char*, Factory>> {
 protected:
  void SetUp() override { h_ = GetParam().second(); }
  void TearDown() override { h_.reset(); }

  // Polls `done` until it holds or 20 s pass (real processes take their time; never a sleep that
  // guesses how long).
  bool Eventually(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + seconds(20);
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
  }
  JobRecord Launched(int64_t id, const Script& script) {
    JobRecord job = h_->Job(id, script);
    auto run = h_->runtime().Launch(job, 0, h_->Now(), kNoLeaseDeadline);
    EXPECT_TRUE(run.ok()) << run.status().message();
    if (run.ok()) job.run = *run;
    return job;
  }
  std::vector<ReplicaObservation> Observe(const JobRecord& job) {
    auto seen = h_->runtime().Observe(job, h_->Now());
    EXPECT_TRUE(seen.ok()) << seen.status().message();
    return seen.ok() ? seen->replicas : std::vector<ReplicaObservation>{};
  }
  bool AllExited(const JobRecord& job) {
    std::vector<ReplicaObservation> seen = Observe(job);
    return !seen.empty() && std::all_of(seen.begin(), seen.end(), [](const ReplicaObservation& r) {
      return r.phase == ReplicaPhase::kExited;
    });
  }
  bool Listed(int64_t job_id) {
    for (const ReplicaOwner& o : h_->runtime().JobsWithReplicas()) {
      if (o.job_id == job_id) return true;
    }
    return false;
  }
  bool Printed(const std::vector<LogLine>& lines) {
    return std::any_of(lines.begin(), lines.end(), [&](const LogLine& l) {
      return l.message == h_->PrintedLine() && l.task_name == "workerpool0-0";
    });
  }

  std::unique_ptr<Harness> h_;
};

TEST_P(RuntimeContractTest, ALaunchIsIdempotentForItsAttempt) {
  JobRecord job = Launched(11, Script{true, 0});
  ASSERT_TRUE(job.run);
  ASSERT_EQ(job.run->replicas.size(), 2u);
  EXPECT_EQ(job.run->replicas[0].task_name, "workerpool0-0");
  EXPECT_EQ(job.run->replicas[1].task_name, "workerpool1-0");
  auto again = h_->runtime().Launch(job, 0, h_->Now(), kNoLeaseDeadline);
  ASSERT_TRUE(again.ok()) << again.status().message();
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(again->replicas[i].handle, job.run->replicas[i].handle) << "the same replicas";
  }
  ASSERT_TRUE(h_->runtime().Stop(job).ok());
}

TEST_P(RuntimeContractTest, ReplicasExitWithTheirOwnCodes) {
  JobRecord job = Launched(12, Script{false, 3});
  h_->Play(job);
  ASSERT_TRUE(Eventually([&] { return AllExited(job); }));
  std::vector<ReplicaObservation> seen = Observe(job);
  EXPECT_EQ(seen[0].exit_code, 3);
  EXPECT_EQ(seen[1].exit_code, 0);
}

// What a cancel relies on (the supervisor ends a CANCELLING job once no replica is up).
TEST_P(RuntimeContractTest, StopIsIdempotentAndLeavesNothingUpOrListed) {
  JobRecord job = Launched(13, Script{true, 0});
  h_->Play(job);
  job.job.state = JobState::kCancelling;
  ASSERT_TRUE(h_->runtime().Stop(job).ok());
  ASSERT_TRUE(Eventually([&] {
    EXPECT_TRUE(h_->runtime().Stop(job).ok()) << "again and again, while they wind down";
    std::vector<ReplicaObservation> seen = Observe(job);
    return !Listed(13) && std::none_of(seen.begin(), seen.end(), [](const ReplicaObservation& r) {
      return r.phase == ReplicaPhase::kRunning || r.phase == ReplicaPhase::kPending;
    });
  })) << "replicas still up or listed after the stop";
  EXPECT_TRUE(h_->runtime().Stop(h_->Job(14, Script{})).ok()) << "a job never launched";
}

TEST_P(RuntimeContractTest, StopOtherAttemptsKeepsTheOneAsked) {
  JobRecord job = Launched(15, Script{true, 0});
  h_->Play(job);
  ASSERT_TRUE(h_->runtime().StopOtherAttempts(15, 0).ok());
  for (const ReplicaObservation& r : Observe(job)) {
    EXPECT_NE(r.phase, ReplicaPhase::kExited) << r.task_name << " of the attempt kept";
  }
  ASSERT_TRUE(h_->runtime().Stop(job).ok());
}

TEST_P(RuntimeContractTest, LinesAreHandedOverUntilStoredAndNeverAfter) {
  JobRecord job = Launched(16, Script{false, 0});
  h_->Play(job);
  ASSERT_TRUE(Eventually([&] { return AllExited(job); }));
  h_->Ended(job);
  std::vector<LogLine> lines;
  ASSERT_TRUE(Eventually([&] {
    lines = h_->runtime().CollectLogs(h_->Now());
    return Printed(lines);
  })) << "the primary's line";
  // The append failed: the next call hands the same line over again.
  EXPECT_TRUE(Printed(h_->runtime().CollectLogs(h_->Now())));
  h_->runtime().LogsStored();
  EXPECT_FALSE(Printed(h_->runtime().CollectLogs(h_->Now()))) << "stored once, never again";
}

INSTANTIATE_TEST_SUITE_P(
    EveryRuntime, RuntimeContractTest,
    ::testing::Values(
        std::make_pair("sim", Factory([] { return std::unique_ptr<Harness>(new SimHarness); })),
        std::make_pair("local", Factory([] { return std::unique_ptr<Harness>(new LocalHarness); })),
        std::make_pair("slurm",
                       Factory([] { return std::unique_ptr<Harness>(new SlurmHarness); }))),
    [](const auto& info) { return std::string(info.param.first); });

}  // namespace
}  // namespace trainyard
