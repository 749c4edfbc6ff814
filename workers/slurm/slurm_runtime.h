#pragma once
// The Slurm runtime (`serve --runtime=slurm`): Trainyard's scheduler admits a job onto the pools
// of its fleet file, whose pools name Slurm partitions, and this runtime runs the admitted job on
// the cluster as one Slurm batch job: every replica is a task of one srun step, started by the
// task script (task_script.h) with its own command and distributed environment. Worker pools
// placed on pools of different partitions make it a heterogeneous job, a component per partition
// (started together, by Slurm's backfill scheduler only). Slurm only runs; it does not decide who
// goes first (README, "Who schedules").
//
// What survives whom:
// - The Slurm job id is each replica's handle, stored with the job's run. A server that dies
//   between submitting and storing finds the job again by its name (<prefix>-<job>-a<attempt>)
//   before submitting: nothing is submitted twice.
// - What each replica did (started.<n>, exit.<n>, output.log) is in the shared directory, which
//   the nodes write and this server reads, so it survives the server and slurmrestd alike.
// - While slurmrestd is down or refuses the token, every call returns UNAVAILABLE: jobs keep their
//   state and the executor tries again on its next pass.
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "services/runtime/replica_plan.h"
#include "services/runtime/runtime.h"
#include "workers/files/output_tailer.h"
#include "workers/files/unique_fd.h"
#include "workers/slurm/shared_tree.h"
#include "workers/slurm/slurm_api.h"

namespace trainyard::slurm {

struct SlurmRuntimeOptions {
  // Seen by this server and by every node at the same path: replicas work in
  // shared_dir/jobs/<job>/attempt-<n>/<task>.
  std::filesystem::path shared_dir;
  JobSpecEncoder encode_job_spec;  // CLUSTER_SPEC's "job" (services/runtime/replica_plan.h)
  // The server's own, on this host only (where each output was read to): not in shared_dir, which
  // the cluster's jobs can write.
  std::filesystem::path state_dir;
  // The Slurm user the jobs run as (X-SLURM-USER-NAME): only its jobs are ever taken for ours.
  std::string user;
  // A secret of this installation (in state_dir, 0600): a job is ours only when its comment holds
  // the tag made with it for its name, so nobody can have a job of theirs adopted by naming it
  // like ours. Empty: no tag is asked for (tests of other things).
  std::string tag_key;
  // Set (the server is root): the job folders are handed to this user, since the jobs run as it.
  std::optional<FolderOwner> folder_owner;
  std::string default_partition;                         // empty: the cluster's default
  std::map<std::string, std::string> partition_of_pool;  // fleet pool id → partition
  // Replicas per node: 1 on a real cluster (a replica is a VM on Vertex); more on a one-node test
  // cluster, where replicas then listen on distinct ports.
  int tasks_per_node = 1;
  std::string job_prefix = "trainyard";
  std::chrono::milliseconds poll{250};  // how old the job list may be (wall time)
  // How old a job list a launch may trust to say whether its attempt was submitted before. An
  // executor that submitted it and died stopped launching a quarter lease before its lease ran out
  // (JobExecutor::LeaseHeld), so any list read since a quarter lease ago has seen that submit: at
  // most lease / 4. Not a fresh read per launch, which made a burst of launches read the whole
  // job list once each.
  std::chrono::milliseconds launch_lookup_age{500};
};

class SlurmRuntime : public Runtime {
 public:
  SlurmRuntime(std::unique_ptr<SlurmApi> api, SlurmRuntimeOptions options);

  std::string_view name() const override { return "slurm"; }
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
  std::vector<LogLine> CollectLogs(Timestamp now) override;
  void LogsStored() override;
  // The cluster keeps running them; the next server adopts them by their tags.
  void Shutdown(const std::vector<int64_t>&) override {}

  // Slurm's name for the attempt's batch job, and the tag its comment carries.
  std::string SlurmJobName(int64_t job_id, int attempt) const;
  std::string SlurmJobTag(int64_t job_id, int attempt) const;
  std::filesystem::path AttemptDir(int64_t job_id, int attempt) const;

 private:
  // The shared tree's root, made when missing, checked as OpenTreeRoot does (shared_tree.h).
  StatusOr<files::UniqueFd> MakeTreeRoot() const;
  // Makes the attempt's folder afresh with the task script in it, then hands it and its job's
  // folder to the Slurm user (0700). Refused when the attempt's folder is there already.
  StatusOr<AttemptFolders> MakePrivateFolders(int64_t job_id, int attempt,
                                              const std::string& task_script) const;
  // Writes the task script into the new attempt folder, then hands both folders over.
  Status FillAndHandOver(const AttemptFolders& folders, int64_t job_id, int attempt,
                         const std::string& task_script) const;
  // Makes the attempt's folder (MakePrivateFolders) and submits its Slurm job; a submit that
  // fails takes the folder back.
  StatusOr<int64_t> SubmitInNewFolder(int64_t job_id, int attempt, const SlurmSubmit& submit,
                                      const std::string& task_script,
                                      std::chrono::milliseconds timeout);
  // The attempt's folder, walked to from the root without following a link.
  StatusOr<files::UniqueFd> OpenAttemptFolder(int64_t job_id, int attempt) const;
  // The task's folder in the attempt's, made (the Slurm user's) when its wrapper has not yet.
  StatusOr<files::UniqueFd> TaskFolder(int attempt_dir, const std::string& task) const;

  struct Ours {
    ReplicaOwner owner;
    SlurmJob job;
  };
  // Our jobs as Slurm last listed them; read again when older than `max_age`. The lock is held by
  // the caller.
  Status Refresh(std::chrono::milliseconds max_age);
  const Ours* Find(int64_t slurm_id, int64_t job_id, int attempt) const;
  std::optional<ReplicaOwner> OwnerOf(const std::string& slurm_name) const;
  void Follow(int64_t job_id, int attempt, const std::vector<std::string>& tasks, int64_t slurm_id);

  std::unique_ptr<SlurmApi> api_;
  SlurmRuntimeOptions options_;
  std::mutex mu_;
  std::vector<Ours> ours_;
  std::set<int64_t> noticed_;  // Slurm jobs a stop notice has sent SIGTERM (Notice is repeated)
  std::optional<std::chrono::steady_clock::time_point> read_at_;
  files::OutputTailer tailer_;
  std::map<std::filesystem::path, int64_t> slurm_job_of_output_;
};

}  // namespace trainyard::slurm
