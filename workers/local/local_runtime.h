#pragma once
// The local-process runtime (`serve --runtime=local`): every replica of a job runs as a process of
// this host, for development and tests. Images are recorded, not pulled: the replica runs its
// containerSpec.command + args (or `python3 -m` its pythonPackageSpec module) in its own working
// directory under the data dir, with its pool's env and the distributed environment
// (services/runtime/replica_plan.h), where every hostname is 127.0.0.1 and every port a free one.
//
// Each replica is a process group, and a session, led by a small keeper (a fork of this server
// that runs nothing but waitpid): it starts the command (in bubblewrap where it can start, see
// workers/local/replica_sandbox.h), waits for it and writes its exit status to a file beside the
// working directory. So a replica's outcome survives the server: after a kill -9 the new server
// finds the process (its pid file and start time) and adopts it, or reads the status it left, and
// never starts a replica twice. Output goes to a file in the working directory, which the runtime
// tails line by line into log entries; no pipe ties a replica's life to the server's.
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "services/logs/log_entry.h"
#include "services/runtime/replica_plan.h"
#include "services/runtime/runtime.h"
#include "workers/files/output_tailer.h"
#include "workers/local/replica_sandbox.h"

namespace trainyard::local {

struct LocalRuntimeOptions {
  // The server keeps each replica's files in root/jobs/<job>/attempt-<n>/<task>; the replica works
  // in that folder's work/, the only place it may write.
  std::filesystem::path root;
  // The server's data directory, hidden from replicas with `root` (HiddenFromReplicas); empty:
  // `root` alone.
  std::filesystem::path data_dir;
  SandboxOptions sandbox;                  // the replicas' user, bubblewrap, cgroups and limits
  std::chrono::milliseconds grace{10000};  // SIGTERM, then SIGKILL after this (wall time)
  JobSpecEncoder encode_job_spec;          // CLUSTER_SPEC's "job" (services/runtime/replica_plan.h)
  std::chrono::milliseconds poll{200};     // how often a running job is looked at (wall time)
};

// What starts a replica, as its launch record (launch.json) keeps it for restarts.
struct ReplicaLaunch {
  std::vector<std::string> argv;
  std::vector<std::string> env;
  uint64_t cpu_seconds = 0;  // RLIMIT_CPU; 0: none
  CgroupLimits cgroup;       // where the replicas' cgroups take limits
};

class LocalRuntime : public Runtime {
 public:
  explicit LocalRuntime(LocalRuntimeOptions options);
  ~LocalRuntime() override;

  std::string_view name() const override { return "local"; }
  StatusOr<JobRun> Launch(const JobRecord& job, int attempt, Timestamp now,
                          LeaseDeadline lease_deadline) override;
  StatusOr<Observation> Observe(const JobRecord& job, Timestamp now) override;
  StatusOr<std::string> RestartReplica(const JobRecord& job, const ReplicaRun& replica,
                                       Timestamp now, LeaseDeadline lease_deadline) override;
  Status Stop(const JobRecord& job) override;
  Status Notice(const JobRecord& job) override;
  std::vector<ReplicaOwner> JobsWithReplicas() override;
  Status StopOtherAttempts(int64_t job_id, int keep) override;

  void Applied(const JobRecord&, const JobTransition&) override {}
  // New output lines of every replica since the last call (the replicas' output files, tailed).
  std::vector<LogLine> CollectLogs(Timestamp now) override;
  void LogsStored() override;
  // Ends the replicas of these jobs (SIGTERM, then SIGKILL after the grace): the server is
  // stopping, and these were its jobs. Replicas it adopted whose jobs another server supervises
  // are left alone.
  void Shutdown(const std::vector<int64_t>& jobs) override;

 private:
  struct Process {
    int64_t job_id = 0;
    std::string task;
    int pid = 0;  // the keeper's pid, which is the group's id
    uint64_t start_ticks = 0;
    std::filesystem::path dir;  // root/jobs/<job>/attempt-<n>/<task>
    std::optional<std::chrono::steady_clock::time_point> term_sent;
    std::filesystem::path cgroup;  // the replica's own cgroup; empty: none

    int attempt() const;
  };

  std::filesystem::path ReplicaDir(int64_t job_id, int attempt, const std::string& task) const;
  // The server's folders down to the replica's `dir` (MakeServerFolder).
  Status MakeReplicaDir(const std::filesystem::path& dir) const;
  StatusOr<Process> Start(int64_t job_id, const std::filesystem::path& dir,
                          const ReplicaLaunch& launch);
  // The argv the keeper's child execs: bwrap's around the command, or the command.
  std::vector<std::string> ExecArgv(const std::filesystem::path& work_dir,
                                    const std::vector<std::string>& command) const;
  // The start of the names of the replica's cgroups, after its folder; empty without cgroups.
  std::string CgroupPrefix(const std::filesystem::path& dir) const;
  Process Known(int64_t job_id, const std::string& task, int pid, uint64_t start_ticks,
                const std::filesystem::path& dir) const;
  void Adopt();  // processes left by an earlier server, found by their pid files
  // Takes on the job's live replicas its row names that this process does not hold yet.
  void AdoptLocked(const JobRecord& job);
  void Tail(const std::filesystem::path& dir);  // follows the replica's output.log
  bool Alive(const Process& p);
  void Signal(Process& p);

  LocalRuntimeOptions options_;
  std::vector<std::filesystem::path> hidden_;  // from the replicas (HiddenFromReplicas)
  std::mutex mu_;
  std::map<std::string, Process> processes_;  // by handle
  files::OutputTailer tailer_;                // every replica's output.log
};

}  // namespace trainyard::local
