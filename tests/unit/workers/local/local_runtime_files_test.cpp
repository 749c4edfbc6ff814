// What the local runtime keeps of a replica on disk (workers/local/local_runtime.h): the launch
// record holds the job's environment, secrets included, so everything the server writes is 0600
// in folders closed to others (0700; 0710 for the replicas' group when the server is root, which
// local_isolation_test.sh checks), and the record carries the replica's cgroup limits.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "workers/files/text_file.h"
#include "workers/local/local_runtime.h"

namespace trainyard::local {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

const Timestamp kT0 = FromUnixMicros(1'000'000'000'000);

JobRecord OneReplicaJob(int64_t id, const std::string& script) {
  JobRecord record;
  record.id = id;
  record.version = 1;
  record.project_number = 100000000001;
  record.job.name = "projects/100000000001/locations/us-central1/customJobs/" + std::to_string(id);
  record.job.start_time = kT0;
  WorkerPoolSpec spec;
  spec.machine_spec = MachineSpec{};
  spec.machine_spec->machine_type = "n2-standard-8";
  spec.replica_count = 1;
  spec.container_spec = ContainerSpec{};
  spec.container_spec->image_uri = "debian:12";
  spec.container_spec->command = {"sh", "-c", script};
  spec.container_spec->env = {{"HF_TOKEN", "secret-a-123"}};
  record.job.job_spec.worker_pool_specs.push_back(spec);
  return record;
}

class LocalRuntimeFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("ty-local-files-" + std::to_string(getpid()));
    fs::remove_all(root_);
    LocalRuntimeOptions options;
    options.root = root_;
    options.grace = 200ms;
    runtime_ = std::make_unique<LocalRuntime>(options);
  }
  void TearDown() override {
    runtime_->Shutdown({7});
    runtime_.reset();
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  // Observes `job` until its replica has exited (real processes: a wall deadline).
  bool Exited(JobRecord& job) {
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (std::chrono::steady_clock::now() < deadline) {
      auto seen = runtime_->Observe(job, kT0);
      if (seen.ok() && !seen->replicas.empty() &&
          seen->replicas[0].phase == ReplicaPhase::kExited) {
        return true;
      }
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }

  JobRecord LaunchedAndExited(const std::string& script) {
    JobRecord job = OneReplicaJob(7, script);
    auto run = runtime_->Launch(job, 0, kT0, kNoLeaseDeadline);
    EXPECT_TRUE(run.ok()) << run.status().message();
    if (run.ok()) job.run = *run;
    EXPECT_TRUE(Exited(job));
    return job;
  }

  static unsigned Mode(const fs::path& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
  }

  fs::path root_;
  std::unique_ptr<LocalRuntime> runtime_;
};

TEST_F(LocalRuntimeFilesTest, TheServersFilesAre0600InFoldersClosedToOthers) {
  const JobRecord job = LaunchedAndExited("echo hello");
  const fs::path dir = root_ / "jobs" / "7" / "attempt-0" / "workerpool0-0";
  for (const fs::path& folder :
       {root_, root_ / "jobs", root_ / "jobs" / "7", root_ / "jobs" / "7" / "attempt-0", dir}) {
    EXPECT_EQ(Mode(folder), 0700u) << folder;
  }
  for (const char* file : {"launch.json", "output.log", "pid", "exit_code"}) {
    EXPECT_EQ(Mode(dir / file), 0600u) << file;
  }
  EXPECT_EQ(Mode(dir / "work"), 0700u);
}

TEST_F(LocalRuntimeFilesTest, TheLaunchRecordCarriesTheCgroupLimitsAndRestartsAsIs) {
  JobRecord job = LaunchedAndExited("echo run >> runs");
  const fs::path dir = root_ / "jobs" / "7" / "attempt-0" / "workerpool0-0";
  const auto launch = nlohmann::json::parse(files::ReadFile(dir / "launch.json"), nullptr, false);
  ASSERT_TRUE(launch.is_object());
  EXPECT_EQ(launch.value("memoryMax", uint64_t{0}), uint64_t{32} << 30);  // n2-standard-8
  EXPECT_EQ(launch.value("pidsMax", uint64_t{0}), 1024u);
  // Restarted from the record: the same command, in the same folder.
  auto handle = runtime_->RestartReplica(job, job.run->replicas[0], kT0, kNoLeaseDeadline);
  ASSERT_TRUE(handle.ok()) << handle.status().message();
  job.run->replicas[0].handle = *handle;
  ASSERT_TRUE(Exited(job));
  EXPECT_EQ(files::ReadFile(dir / "work" / "runs"), "run\nrun\n");
  EXPECT_EQ(Mode(dir / "pid"), 0600u);
}

}  // namespace
}  // namespace trainyard::local
