#include "workers/slurm/slurm_runtime.h"

#include "tests/unit/workers/slurm/fake_slurm.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

namespace trainyard::slurm {
namespace {
namespace fs = std::filesystem;

const Timestamp kT0 = FromUnixMicros(1'000'000'000'000);

class SlurmRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ty-slurm-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::remove_all(Outside());
    options_.shared_dir = dir_;
    options_.state_dir = dir_ / "state";
    options_.user = "alice";
    options_.tag_key = "the installation's secret";
    options_.partition_of_pool = {{"us-central1-a/n2", "cpu"}, {"us-central1-a/e2", "small"}};
    options_.poll = std::chrono::milliseconds(0);  // every call reads the job list again
    options_.launch_lookup_age = std::chrono::milliseconds(0);
    Start();
  }
  void TearDown() override {
    fs::remove_all(dir_);
    fs::remove_all(Outside());
  }
  void Start() {
    auto fake = std::make_unique<FakeSlurm>();
    slurm_ = fake.get();
    runtime_ = std::make_unique<SlurmRuntime>(std::move(fake), options_);
  }
  // As a root server does, the job folders go to the Slurm user (here nobody, 65534), where the
  // tests can chown: a link followed would hand what it points to over too.
  void HandFoldersToNobody() {
    if (geteuid() != 0) return;
    options_.folder_owner = FolderOwner{65534, 65534};
    Start();
  }
  // Beside the shared tree, where a job's links point: nothing there is the job's.
  fs::path Outside() const { return dir_.string() + "-outside"; }

  // A chief and two workers running `sh -c true`, admitted onto pool us-central1-a/n2 (the
  // workers onto `workers_pool`).
  JobRecord Job(const std::string& workers_pool = "us-central1-a/n2") {
    JobRecord record;
    record.id = 7;
    record.project_number = 100000000001;
    record.job.name = "projects/100000000001/locations/us-central1/customJobs/7";
    record.job.state = JobState::kPending;
    for (int replicas : {1, 2}) {
      WorkerPoolSpec pool;
      pool.machine_spec = MachineSpec{};
      pool.machine_spec->machine_type = "n2-standard-8";
      pool.replica_count = replicas;
      pool.container_spec = ContainerSpec{};
      pool.container_spec->image_uri = "debian:12";
      pool.container_spec->command = {"sh", "-c", "true"};
      record.job.job_spec.worker_pool_specs.push_back(pool);
    }
    record.job.trainyard = SchedulingStatus{};
    for (const std::string& pool_id : {std::string("us-central1-a/n2"), workers_pool}) {
      PlacedPoolStatus placed;
      placed.pool_id = pool_id;
      placed.machine_type = "n2-standard-8";
      record.job.trainyard->pools.push_back(placed);
    }
    return record;
  }
  void Write(const JobRecord& job, const std::string& task, const std::string& file,
             const std::string& text) {
    fs::path d = runtime_->AttemptDir(job.id, job.run->attempt) / task;
    fs::create_directories(d);
    std::ofstream(d / file) << text;
  }

  fs::path dir_;
  SlurmRuntimeOptions options_;
  FakeSlurm* slurm_ = nullptr;
  std::unique_ptr<SlurmRuntime> runtime_;
};

struct Stat {
  uid_t uid = 0;
  gid_t gid = 0;
  mode_t mode = 0;
  bool operator==(const Stat&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Stat& s) {
  return os << "uid " << s.uid << " gid " << s.gid << " mode " << std::oct << s.mode << std::dec;
}
Stat StatOf(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
  return Stat{st.st_uid, st.st_gid, st.st_mode};
}

TEST_F(SlurmRuntimeTest, AJobIsOneSlurmJobWithATaskPerReplicaInItsPoolsPartition) {
  JobRecord job = Job();
  auto run = runtime_->Launch(job, 0, kT0, kNoLeaseDeadline);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(slurm_->submitted.size(), 1u);
  const SlurmSubmit& s = slurm_->submitted[0];
  EXPECT_EQ(s.name, "trainyard-7-a0");
  ASSERT_EQ(s.components.size(), 1u) << "both pools are on one partition";
  EXPECT_EQ(s.components[0].partition, "cpu");
  EXPECT_EQ(s.components[0].tasks, 3);
  EXPECT_EQ(s.components[0].nodes, 3) << "one replica per node, as on Vertex";
  EXPECT_EQ(s.time_limit_minutes, 7 * 24 * 60 + 2) << "a backstop past the 7-day default timeout";
  EXPECT_NE(s.script.find("srun --ntasks=3"), std::string::npos);
  EXPECT_TRUE(fs::exists(runtime_->AttemptDir(7, 0) / "task.sh"));
  ASSERT_EQ(run->replicas.size(), 3u);
  EXPECT_EQ(run->replicas[2].task_name, "workerpool1-1");
  EXPECT_EQ(run->replicas[2].handle, "slurm:100");
}

TEST_F(SlurmRuntimeTest, PoolsOnDifferentPartitionsAreOneHeterogeneousJob) {
  JobRecord job = Job("us-central1-a/e2");
  auto run = runtime_->Launch(job, 0, kT0, kNoLeaseDeadline);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(slurm_->submitted.size(), 1u);
  const SlurmSubmit& s = slurm_->submitted[0];
  ASSERT_EQ(s.components.size(), 2u);
  EXPECT_EQ(s.components[0].partition, "cpu");
  EXPECT_EQ(s.components[0].tasks, 1);
  EXPECT_EQ(s.components[1].partition, "small");
  EXPECT_EQ(s.components[1].tasks, 2);
  EXPECT_EQ(s.components[1].nodes, 2);
  EXPECT_NE(s.script.find("--het-group=0 --ntasks=1"), std::string::npos) << s.script;
  EXPECT_NE(s.script.find(" : --het-group=1 --ntasks=2"), std::string::npos) << s.script;
  EXPECT_EQ(run->replicas[2].handle, "slurm:100") << "the first component stands for the job";

  // Slurm lists the second component as a job of its own, under the same name: it is neither a
  // second submit of the attempt nor a stray.
  JobRecord again = job;
  again.run = *run;
  auto observed = runtime_->Observe(again, kT0);
  ASSERT_TRUE(observed.ok()) << observed.status().message();
  EXPECT_EQ(runtime_->JobsWithReplicas().size(), 1u);
  ASSERT_TRUE(runtime_->Stop(again).ok());
  EXPECT_EQ(slurm_->cancelled, std::vector<int64_t>{100}) << "the whole job, by its first id";
}

TEST_F(SlurmRuntimeTest, ALaunchWhoseRunWasNeverStoredFindsItsSlurmJobInsteadOfSubmittingAgain) {
  JobRecord job = Job();
  ASSERT_TRUE(runtime_->Launch(job, 0, kT0, kNoLeaseDeadline).ok());
  // The server died before storing the run: the next launch of the same attempt.
  auto again = runtime_->Launch(job, 0, kT0, kNoLeaseDeadline);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(slurm_->submitted.size(), 1u);
  EXPECT_EQ(again->replicas[0].handle, "slurm:100");
  // A new attempt is a new Slurm job.
  ASSERT_TRUE(runtime_->Launch(job, 1, kT0, kNoLeaseDeadline).ok());
  EXPECT_EQ(slurm_->submitted.size(), 2u);
  EXPECT_EQ(slurm_->submitted[1].name, "trainyard-7-a1");
}

TEST_F(SlurmRuntimeTest, AnAttemptAnotherServerSubmittedIsTakenUpNotSubmittedAgain) {
  // The server that held the job submitted it, then died before storing the run.
  slurm_->jobs.push_back(SlurmJob{42, "trainyard-7-a0",
                                  "Trainyard … " + runtime_->SlurmJobTag(7, 0), "RUNNING", "None",
                                  0, "vm", 0, 0, "alice"});
  auto run = runtime_->Launch(Job(), 0, kT0, kNoLeaseDeadline);
  ASSERT_TRUE(run.ok());
  EXPECT_TRUE(slurm_->submitted.empty());
  EXPECT_EQ(run->replicas[0].handle, "slurm:42");
}

// Another user's job named like ours, or ours without our tag, is neither adopted nor cancelled.
TEST_F(SlurmRuntimeTest, AJobOfAnotherUserOrWithoutOurTagIsNeverTakenForOurs) {
  const std::string tag = runtime_->SlurmJobTag(7, 0);
  ASSERT_EQ(tag.size(), 4u + 24u) << tag;
  EXPECT_NE(runtime_->SlurmJobTag(7, 1), tag);
  slurm_->jobs.push_back(SlurmJob{40, "trainyard-7-a0", "Trainyard … " + tag, "RUNNING", "None", 0,
                                  "vm", 0, 0, "mallory"});
  slurm_->jobs.push_back(SlurmJob{41, "trainyard-7-a0", "Trainyard … tag=000000000000000000000000",
                                  "RUNNING", "None", 0, "vm", 0, 0, "alice"});
  slurm_->jobs.push_back(
      SlurmJob{43, "trainyard-7-a1", "Trainyard …", "RUNNING", "None", 0, "vm", 0, 0, "alice"});
  auto run = runtime_->Launch(Job(), 0, kT0, kNoLeaseDeadline);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(slurm_->submitted.size(), 1u) << "submitted anew: none of those is ours";
  EXPECT_NE(slurm_->submitted[0].comment.find(tag), std::string::npos);
  EXPECT_EQ(runtime_->JobsWithReplicas(), (std::vector<ReplicaOwner>{{7, 0}}));
  ASSERT_TRUE(runtime_->StopOtherAttempts(7, 0).ok());
  EXPECT_TRUE(slurm_->cancelled.empty()) << "the look-alike of attempt 1 is no stray of ours";
  JobRecord job = Job();
  job.run = *run;
  ASSERT_TRUE(runtime_->Stop(job).ok());
  EXPECT_EQ(slurm_->cancelled, std::vector<int64_t>{100}) << "only our own job is cancelled";
}

// A submit gives up before the lease may pass to another executor, and none starts after it.
TEST_F(SlurmRuntimeTest, NoSubmitOutlivesTheLease) {
  const auto gone = std::chrono::steady_clock::now() - std::chrono::milliseconds(1);
  auto run = runtime_->Launch(Job(), 0, kT0, gone);
  EXPECT_EQ(run.status().code(), Code::kUnavailable) << run.status().message();
  EXPECT_TRUE(slurm_->submitted.empty());
  const auto soon = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  EXPECT_TRUE(runtime_->Launch(Job(), 0, kT0, soon).ok());
  ASSERT_EQ(slurm_->timeouts.size(), 1u);
  EXPECT_LE(slurm_->timeouts[0], std::chrono::seconds(2)) << "bounded by what is left of it";
  EXPECT_GT(slurm_->timeouts[0], std::chrono::milliseconds(0));
}

TEST_F(SlurmRuntimeTest, AJobsFoldersAreTheSlurmUsersAlone) {
  ASSERT_TRUE(runtime_->Launch(Job(), 0, kT0, kNoLeaseDeadline).ok());
  for (const fs::path& d : {runtime_->AttemptDir(7, 0), runtime_->AttemptDir(7, 0).parent_path()}) {
    EXPECT_EQ(fs::status(d).permissions() & fs::perms::all, fs::perms::owner_all) << d;
  }
}

TEST_F(SlurmRuntimeTest, AsRootAJobsFoldersAreHandedToTheSlurmUser) {
  if (geteuid() != 0) GTEST_SKIP() << "handing a folder to another user needs root";
  HandFoldersToNobody();
  ASSERT_TRUE(runtime_->Launch(Job(), 0, kT0, kNoLeaseDeadline).ok());
  for (const fs::path& d : {runtime_->AttemptDir(7, 0), runtime_->AttemptDir(7, 0).parent_path()}) {
    EXPECT_EQ(StatOf(d), (Stat{65534, 65534, S_IFDIR | 0700})) << d;
  }
}

// Issue 48: the job's folder is the Slurm user's from the first attempt on, so a job can leave
// attempt-<next> -> /etc and exit 139; the retry must not have the server (root) chown and chmod
// /etc to it, nor write its task script there.
TEST_F(SlurmRuntimeTest, ALinkPlantedAsTheNextAttemptsFolderIsRefusedAndWhereItPointsIsUntouched) {
  HandFoldersToNobody();
  ASSERT_TRUE(runtime_->Launch(Job(), 0, kT0, kNoLeaseDeadline).ok());
  fs::create_directories(Outside());
  chmod(Outside().c_str(), 0755);
  const Stat before = StatOf(Outside());
  fs::create_directory_symlink(Outside(), runtime_->AttemptDir(7, 1));
  auto run = runtime_->Launch(Job(), 1, kT0, kNoLeaseDeadline);
  EXPECT_EQ(run.status().code(), Code::kAlreadyExists) << run.status().message();
  EXPECT_EQ(StatOf(Outside()), before) << "its owner and mode are as they were";
  EXPECT_TRUE(fs::is_empty(Outside())) << "no task script written through the link";
  EXPECT_EQ(slurm_->submitted.size(), 1u) << "attempt 1 is not submitted";
}

TEST_F(SlurmRuntimeTest, AnAttemptFolderAlreadyThereIsRefusedNotReused) {
  fs::create_directories(runtime_->AttemptDir(7, 0));
  auto run = runtime_->Launch(Job(), 0, kT0, kNoLeaseDeadline);
  EXPECT_EQ(run.status().code(), Code::kAlreadyExists);
  EXPECT_NE(run.status().message().find("not reused"), std::string::npos) << run.status().message();
  EXPECT_TRUE(slurm_->submitted.empty());
  EXPECT_FALSE(fs::exists(runtime_->AttemptDir(7, 0) / "task.sh"));
}

// A submit that failed gives its folder back: the next launch of the attempt is not refused.
TEST_F(SlurmRuntimeTest, ASubmitThatFailsLeavesNoFolderForTheNextLaunchToRefuse) {
  slurm_->submit_fails = true;
  EXPECT_EQ(runtime_->Launch(Job(), 0, kT0, kNoLeaseDeadline).status().code(), Code::kUnavailable);
  EXPECT_FALSE(fs::exists(runtime_->AttemptDir(7, 0)));
  slurm_->submit_fails = false;
  auto run = runtime_->Launch(Job(), 0, kT0, kNoLeaseDeadline);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_TRUE(fs::exists(runtime_->AttemptDir(7, 0) / "task.sh"));
}

// A replica can swap its task's folder, or its output, for a link to what it cannot read; the
// server (root) reads neither into the job's log.
TEST_F(SlurmRuntimeTest, AnOutputReachedThroughALinkIsNotRead) {
  JobRecord job = Job();
  job.run = *runtime_->Launch(job, 0, kT0, kNoLeaseDeadline);
  fs::create_directories(Outside());
  std::ofstream(Outside() / "output.log") << "a secret line\n";
  const fs::path attempt = runtime_->AttemptDir(7, 0);
  fs::create_directory_symlink(Outside(), attempt / "workerpool0-0");
  fs::create_directories(attempt / "workerpool1-0");
  fs::create_symlink(Outside() / "output.log", attempt / "workerpool1-0" / "output.log");
  Write(job, "workerpool1-1", "output.log", "a line of its own\n");
  slurm_->Set(100, "COMPLETED");
  std::string texts;
  for (const LogLine& l : runtime_->CollectLogs(kT0)) texts += l.task_name + ":" + l.message + "|";
  EXPECT_EQ(texts.find("a secret line"), std::string::npos) << texts;
  EXPECT_NE(texts.find("workerpool1-1:a line of its own|"), std::string::npos) << texts;
  EXPECT_NE(texts.find("the output of workerpool0-0 is a symbolic link"), std::string::npos)
      << texts;
  EXPECT_NE(texts.find("the output of workerpool1-0 is a symbolic link"), std::string::npos)
      << texts;
}

TEST_F(SlurmRuntimeTest, AnExitReachedThroughALinkIsNotBelieved) {
  JobRecord job = Job();
  job.run = *runtime_->Launch(job, 0, kT0, kNoLeaseDeadline);
  slurm_->Set(100, "RUNNING");
  fs::create_directories(Outside());
  std::ofstream(Outside() / "started.0") << "";
  std::ofstream(Outside() / "exit.0") << "0\n";
  const fs::path attempt = runtime_->AttemptDir(7, 0);
  fs::create_directory_symlink(Outside(), attempt / "workerpool0-0");
  fs::create_directories(attempt / "workerpool1-0");
  fs::create_symlink(Outside() / "exit.0", attempt / "workerpool1-0" / "exit.0");
  auto seen = runtime_->Observe(job, kT0);
  ASSERT_TRUE(seen.ok()) << seen.status().message();
  EXPECT_EQ(seen->replicas[0].phase, ReplicaPhase::kPending) << "its folder is a link";
  EXPECT_EQ(seen->replicas[1].phase, ReplicaPhase::kPending) << "its exit file is a link";
}

TEST_F(SlurmRuntimeTest, ARestartIsNeverMarkedThroughALink) {
  JobRecord job = Job();
  job.run = *runtime_->Launch(job, 0, kT0, kNoLeaseDeadline);
  fs::create_directories(Outside());
  fs::create_directory_symlink(Outside(), runtime_->AttemptDir(7, 0) / "workerpool1-0");
  ReplicaRun replica = job.run->replicas[1];
  replica.restarts = 1;
  auto handle = runtime_->RestartReplica(job, replica, kT0, kNoLeaseDeadline);
  EXPECT_EQ(handle.status().code(), Code::kFailedPrecondition) << handle.status().message();
  EXPECT_TRUE(fs::is_empty(Outside()));
}

TEST_F(SlurmRuntimeTest, ReplicasArePendingRunningExitedOrLostByTheirFilesAndSlurmsState) {
  JobRecord job = Job();
  job.run = *runtime_->Launch(job, 0, kT0, kNoLeaseDeadline);
  auto phases = [&] {
    auto seen = runtime_->Observe(job, kT0);
    EXPECT_TRUE(seen.ok()) << seen.status().message();
    std::string out;
    for (const ReplicaObservation& r : seen->replicas) {
      out += std::string(ReplicaPhaseName(r.phase)) +
             (r.exit_code ? "(" + std::to_string(*r.exit_code) + ")" : "") + " ";
    }
    return out;
  };
  EXPECT_EQ(phases(), "PENDING PENDING PENDING ");
  slurm_->Set(100, "RUNNING");
  Write(job, "workerpool0-0", "started.0", "");
  Write(job, "workerpool1-0", "started.0", "");
  EXPECT_EQ(phases(), "RUNNING RUNNING PENDING ") << "a task runs once its wrapper started it";
  Write(job, "workerpool1-0", "exit.0", "3\n");
  EXPECT_EQ(phases(), "RUNNING EXITED(3) PENDING ");
  // Restarted in place: run 1 is looked at now.
  job.run->replicas[1].restarts = 1;
  EXPECT_EQ(phases(), "RUNNING PENDING PENDING ");
  slurm_->Set(100, "NODE_FAIL");
  EXPECT_EQ(phases(), "LOST LOST LOST ") << "the allocation ended under them";
}

TEST_F(SlurmRuntimeTest, ARestartAsksTheTasksWrapperForTheNextRun) {
  JobRecord job = Job();
  job.run = *runtime_->Launch(job, 0, kT0, kNoLeaseDeadline);
  ReplicaRun replica = job.run->replicas[1];
  replica.restarts = 1;
  auto handle = runtime_->RestartReplica(job, replica, kT0, kNoLeaseDeadline);
  ASSERT_TRUE(handle.ok());
  EXPECT_EQ(*handle, "slurm:100") << "the same Slurm job: the restart is inside its allocation";
  EXPECT_TRUE(fs::exists(runtime_->AttemptDir(7, 0) / "workerpool1-0" / "restart.1"));
}

TEST_F(SlurmRuntimeTest, StopCancelsTheSlurmJobAndStraysOfOtherAttemptsAreFound) {
  JobRecord job = Job();
  ASSERT_TRUE(runtime_->Launch(job, 0, kT0, kNoLeaseDeadline).ok());
  job.run = *runtime_->Launch(job, 1, kT0, kNoLeaseDeadline);
  auto owners = runtime_->JobsWithReplicas();
  ASSERT_EQ(owners.size(), 2u);
  ASSERT_TRUE(runtime_->StopOtherAttempts(7, 1).ok());
  EXPECT_EQ(slurm_->cancelled, std::vector<int64_t>{100});
  ASSERT_TRUE(runtime_->Stop(job).ok());
  EXPECT_EQ(slurm_->cancelled, (std::vector<int64_t>{100, 101}));
  EXPECT_TRUE(runtime_->JobsWithReplicas().empty());
}

// A stop notice warns the job as a VM's shutdown script would: SIGTERM to the batch shell and
// every step (`scancel --signal=TERM --full`), once; the job runs on until Stop cancels it.
TEST_F(SlurmRuntimeTest, AStopNoticeSendsTermToTheWholeSlurmJobOnce) {
  JobRecord job = Job();
  job.run = *runtime_->Launch(job, 0, kT0, kNoLeaseDeadline);
  ASSERT_TRUE(runtime_->Notice(job).ok());
  ASSERT_TRUE(runtime_->Notice(job).ok());
  EXPECT_EQ(slurm_->signalled, (std::vector<std::pair<int64_t, std::string>>{{100, "SIGTERM"}}));
  EXPECT_TRUE(slurm_->cancelled.empty()) << "a notice warns, it does not stop";
  ASSERT_TRUE(runtime_->Stop(job).ok());
  EXPECT_EQ(slurm_->cancelled, std::vector<int64_t>{100});

  slurm_->down = true;
  JobRecord other = Job();
  other.id = 8;
  other.run = job.run;
  other.run->replicas[0].handle = "slurm:200";
  EXPECT_EQ(runtime_->Notice(other).code(), Code::kUnavailable) << "retried by the executor";
}

TEST_F(SlurmRuntimeTest, AnOutageIsUnavailableAndSubmitsNothing) {
  JobRecord job = Job();
  slurm_->down = true;
  auto run = runtime_->Launch(job, 0, kT0, kNoLeaseDeadline);
  EXPECT_EQ(run.status().code(), Code::kUnavailable);
  EXPECT_TRUE(slurm_->submitted.empty());
  slurm_->down = false;
  job.run = *runtime_->Launch(job, 0, kT0, kNoLeaseDeadline);
  slurm_->down = true;
  EXPECT_EQ(runtime_->Observe(job, kT0).status().code(), Code::kUnavailable)
      << "no guess about replicas while Slurm cannot be asked";
  EXPECT_TRUE(runtime_->JobsWithReplicas().empty()) << "stops nothing it cannot see";
}

TEST_F(SlurmRuntimeTest, AJobWithoutACommandCannotRunOnSlurm) {
  JobRecord job = Job();
  job.job.job_spec.worker_pool_specs[1].container_spec->command.clear();
  auto run = runtime_->Launch(job, 0, kT0, kNoLeaseDeadline);
  EXPECT_EQ(run.status().code(), Code::kInvalidArgument);
  EXPECT_NE(run.status().message().find("workerPoolSpecs[1].containerSpec.command"),
            std::string::npos);
  EXPECT_TRUE(slurm_->submitted.empty());
}

}  // namespace
}  // namespace trainyard::slurm
