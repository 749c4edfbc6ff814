#include "workers/slurm/slurm_runtime.h"

#include <cstdlib>
#include <system_error>

#include "services/auth/api_token.h"
#include "services/hex.h"
#include "services/log.h"
#include "services/runtime/replica_plan.h"
#include "workers/files/text_file.h"
#include "workers/slurm/task_script.h"

namespace trainyard::slurm {
namespace fs = std::filesystem;
using files::ParseNumber;
using files::UniqueFd;

namespace {

constexpr std::string_view kHandlePrefix = "slurm:";
constexpr const char* kOutputFile = "output.log";
constexpr const char* kTaskScript = "task.sh";

std::string Handle(int64_t slurm_id) {
  return std::string(kHandlePrefix) + std::to_string(slurm_id);
}

std::optional<int64_t> SlurmIdOf(const std::string& handle) {
  if (handle.rfind(kHandlePrefix, 0) != 0) return std::nullopt;
  return ParseNumber<int64_t>(std::string_view(handle).substr(kHandlePrefix.size()));
}

// Where a replica listens: 2222 on its own node, as on Vertex; replicas that share a node (a test
// cluster) get distinct ports, spread by job so that jobs side by side do not clash.
int PortOf(int64_t job_id, int task, int tasks_per_node) {
  if (tasks_per_node <= 1) return 2222;
  const uint64_t spread = static_cast<uint64_t>(job_id) % 625 * 64 + static_cast<uint64_t>(task);
  return 20000 + static_cast<int>(spread % 40000);
}

// Slurm's time limit: a backstop a little past scheduling.timeout, in whole minutes. Trainyard
// ends the job at the timeout itself (DEADLINE_EXCEEDED); Slurm checks limits only every 30 s or
// so, and a job it kills first would look like lost replicas.
int TimeLimitMinutes(const CustomJob& job) {
  const auto minutes = std::chrono::ceil<std::chrono::minutes>(JobTimeout(job.job_spec)).count();
  return static_cast<int>(std::min<int64_t>(minutes + 2, 60LL * 24 * 365));
}

// Replicas in task order as the components of one Slurm job: consecutive replicas whose pools
// lie on one partition share a component. Each worker pool's partition is its placed pool's
// (placements skip the empty placeholder pools of a spec).
std::vector<SlurmComponent> ComponentsOf(const JobRecord& job, const std::vector<Replica>& replicas,
                                         const SlurmRuntimeOptions& options) {
  std::vector<std::string> partition_of;
  size_t placed = 0;
  for (const WorkerPoolSpec& wp : job.job.job_spec.worker_pool_specs) {
    std::string partition = options.default_partition;
    if (!wp.IsPlaceholder() && wp.machine_spec) {
      if (job.job.trainyard && placed < job.job.trainyard->pools.size()) {
        auto p = options.partition_of_pool.find(job.job.trainyard->pools[placed].pool_id);
        if (p != options.partition_of_pool.end()) partition = p->second;
      }
      ++placed;
    }
    partition_of.push_back(std::move(partition));
  }
  const int per_node = std::max(1, options.tasks_per_node);
  std::vector<SlurmComponent> out;
  for (const Replica& r : replicas) {
    const std::string& partition = r.pool >= 0 && static_cast<size_t>(r.pool) < partition_of.size()
                                       ? partition_of[static_cast<size_t>(r.pool)]
                                       : options.default_partition;
    if (out.empty() || out.back().partition != partition) {
      out.push_back(SlurmComponent{partition, 0, 0});
    }
    ++out.back().tasks;
  }
  if (out.empty()) out.push_back(SlurmComponent{options.default_partition, 0, 0});
  for (SlurmComponent& c : out) c.nodes = std::max(1, (c.tasks + per_node - 1) / per_node);
  return out;
}

// What a replica's wrapper wrote for its run `n`. Nothing when the task's folder is missing or
// not a folder (a link): the job can swap it, and nothing is read through one.
struct RunFiles {
  std::string exit_text;
  bool started = false;
};

RunFiles ReadRunFiles(const StatusOr<UniqueFd>& attempt_dir, const std::string& task,
                      const std::string& n) {
  RunFiles out;
  if (!attempt_dir.ok()) return out;
  auto task_dir = OpenFolderUnder(attempt_dir->get(), {task});
  if (!task_dir.ok()) return out;
  out.exit_text = ReadRegularAt(task_dir->get(), "exit." + n);
  out.started = IsRegularAt(task_dir->get(), "started." + n);
  return out;
}

}  // namespace

SlurmRuntime::SlurmRuntime(std::unique_ptr<SlurmApi> api, SlurmRuntimeOptions options)
    : api_(std::move(api)),
      options_(std::move(options)),
      // A replica can swap any folder on the way to its output for a link: none is followed.
      tailer_(files::TailerLimits{}, [root = options_.shared_dir](const fs::path& file) {
        return OpenRegularInTree(root, file);
      }) {}

std::string SlurmRuntime::SlurmJobName(int64_t job_id, int attempt) const {
  return options_.job_prefix + "-" + std::to_string(job_id) + "-a" + std::to_string(attempt);
}

std::string SlurmRuntime::SlurmJobTag(int64_t job_id, int attempt) const {
  if (options_.tag_key.empty()) return "";
  // HMAC-SHA256 of the name under the installation's key; 96 bits are plenty against guessing.
  const std::string mac = HashTokenSecret(options_.tag_key, SlurmJobName(job_id, attempt));
  return "tag=" + HexOf(std::string_view(mac).substr(0, 12));
}

StatusOr<UniqueFd> SlurmRuntime::MakeTreeRoot() const {
  // Up to the root the path is the operator's choice: made as it stands.
  std::error_code ec;
  fs::create_directories(options_.shared_dir, ec);
  if (ec) return Internal("cannot create " + options_.shared_dir.string() + ": " + ec.message());
  return OpenTreeRoot(options_.shared_dir);
}

StatusOr<AttemptFolders> SlurmRuntime::MakePrivateFolders(int64_t job_id, int attempt,
                                                          const std::string& task_script) const {
  TY_ASSIGN_OR_RETURN(UniqueFd root, MakeTreeRoot());
  TY_ASSIGN_OR_RETURN(AttemptFolders folders, MakeAttemptFolders(root.get(), job_id, attempt));
  Status made = FillAndHandOver(folders, job_id, attempt, task_script);
  if (!made.ok()) {
    RemoveAttemptFolder(folders, attempt, {kTaskScript});  // the next launch makes it afresh
    return made;
  }
  return folders;
}

Status SlurmRuntime::FillAndHandOver(const AttemptFolders& folders, int64_t job_id, int attempt,
                                     const std::string& task_script) const {
  // Written while the folder is still the server's alone: nobody can have put a name there yet.
  TY_RETURN_IF_ERROR(WriteNewFileAt(folders.attempt.get(), kTaskScript, task_script));
  // The job's folder and its attempt's: only the jobs' user (and root) may enter, since a job's
  // environment, script and output are its project's business.
  const fs::path dir = AttemptDir(job_id, attempt);
  TY_RETURN_IF_ERROR(
      MakePrivate(folders.job.get(), options_.folder_owner, dir.parent_path().string()));
  return MakePrivate(folders.attempt.get(), options_.folder_owner, dir.string());
}

StatusOr<int64_t> SlurmRuntime::SubmitInNewFolder(int64_t job_id, int attempt,
                                                  const SlurmSubmit& submit,
                                                  const std::string& task_script,
                                                  std::chrono::milliseconds timeout) {
  TY_ASSIGN_OR_RETURN(AttemptFolders folders, MakePrivateFolders(job_id, attempt, task_script));
  auto slurm_id = api_->Submit(submit, timeout);
  if (!slurm_id.ok()) {
    // The next launch makes the folder afresh (one already there is refused). A submit that
    // reached Slurm all the same is found by its name instead, and its tasks, finding no script,
    // end as lost replicas: a new attempt, never a job stuck on its folder.
    RemoveAttemptFolder(folders, attempt, {kTaskScript});
  }
  return slurm_id;
}

StatusOr<UniqueFd> SlurmRuntime::OpenAttemptFolder(int64_t job_id, int attempt) const {
  TY_ASSIGN_OR_RETURN(UniqueFd root, OpenTreeRoot(options_.shared_dir));
  return OpenFolderUnder(root.get(), AttemptPath(job_id, attempt));
}

StatusOr<UniqueFd> SlurmRuntime::TaskFolder(int attempt_dir, const std::string& task) const {
  auto made = MakeNewFolderAt(attempt_dir, task);
  if (made.ok()) {
    TY_RETURN_IF_ERROR(MakePrivate(made->get(), options_.folder_owner, task));
    return made;
  }
  if (made.status().code() != Code::kAlreadyExists) return made.status();
  return OpenFolderUnder(attempt_dir, {task});
}

fs::path SlurmRuntime::AttemptDir(int64_t job_id, int attempt) const {
  fs::path dir = options_.shared_dir;
  for (const std::string& name : AttemptPath(job_id, attempt)) dir /= name;
  return dir;
}

std::optional<ReplicaOwner> SlurmRuntime::OwnerOf(const std::string& name) const {
  const std::string prefix = options_.job_prefix + "-";
  if (name.rfind(prefix, 0) != 0) return std::nullopt;
  std::string_view rest = std::string_view(name).substr(prefix.size());
  size_t dash = rest.find("-a");
  if (dash == std::string_view::npos) return std::nullopt;
  auto job_id = ParseNumber<int64_t>(rest.substr(0, dash));
  auto attempt = ParseNumber<int>(rest.substr(dash + 2));
  if (!job_id || !attempt) return std::nullopt;
  return ReplicaOwner{*job_id, *attempt};
}

Status SlurmRuntime::Refresh(std::chrono::milliseconds max_age) {
  const auto wall = std::chrono::steady_clock::now();
  if (read_at_ && wall - *read_at_ < max_age) return Status::Ok();
  TY_ASSIGN_OR_RETURN(std::vector<SlurmJob> jobs, api_->Jobs());
  std::vector<Ours> ours;
  for (SlurmJob& j : jobs) {
    // A heterogeneous job's later components carry its name too; its first stands for it.
    if (j.het_job_id != 0 && j.het_job_offset != 0) continue;
    // Another user's job is never ours, whatever its name; nor one without our tag.
    if (!options_.user.empty() && j.user_name != options_.user) continue;
    auto owner = OwnerOf(j.name);
    if (!owner) continue;
    const std::string tag = SlurmJobTag(owner->job_id, owner->attempt);
    if (!tag.empty() && !j.comment.ends_with(" " + tag)) continue;
    ours.push_back({*owner, std::move(j)});
  }
  ours_ = std::move(ours);
  read_at_ = wall;
  return Status::Ok();
}

const SlurmRuntime::Ours* SlurmRuntime::Find(int64_t slurm_id, int64_t job_id, int attempt) const {
  const Ours* by_name = nullptr;
  for (const Ours& o : ours_) {
    if (slurm_id > 0 && o.job.job_id == slurm_id) return &o;
    if (o.owner.job_id == job_id && o.owner.attempt == attempt) {
      // Of several (a resubmit after an outage lost the answer), the live one.
      if (by_name == nullptr || !SlurmJobEnded(o.job.state)) by_name = &o;
    }
  }
  return slurm_id > 0 ? nullptr : by_name;
}

void SlurmRuntime::Follow(int64_t job_id, int attempt, const std::vector<std::string>& tasks,
                          int64_t slurm_id) {
  for (const std::string& task : tasks) {
    fs::path file = AttemptDir(job_id, attempt) / task / kOutputFile;
    slurm_job_of_output_[file] = slurm_id;
    if (tailer_.Following(file)) continue;  // every look says so: no folder made for it again
    // Where it was read to is the server's, kept apart from what the cluster's jobs can write.
    fs::path offset = options_.state_dir / "jobs" / std::to_string(job_id) /
                      ("attempt-" + std::to_string(attempt)) / (task + ".offset");
    std::error_code ec;
    fs::create_directories(offset.parent_path(), ec);
    tailer_.Follow(file, offset, job_id, task);
  }
}

StatusOr<JobRun> SlurmRuntime::Launch(const JobRecord& job, int attempt, Timestamp now,
                                      LeaseDeadline lease_deadline) {
  (void)now;
  // Task k of the step is replicas[k]; the plan is made twice, first to number the replicas,
  // then with each one's host placeholder and port.
  ReplicaPlanOptions options;
  options.project_number = job.project_number;
  options.job_id = job.id;
  if (options_.encode_job_spec) options.job_spec_json = options_.encode_job_spec(job.job.job_spec);
  TY_ASSIGN_OR_RETURN(std::vector<Replica> numbered, PlanReplicas(job.job, options));
  std::map<std::pair<int, int>, int> task_of;
  for (size_t k = 0; k < numbered.size(); ++k) {
    task_of[{numbered[k].pool, numbered[k].index}] = static_cast<int>(k);
  }
  const int per_node = std::max(1, options_.tasks_per_node);
  options.endpoint = [&](int pool, int index) {
    const int k = task_of.count({pool, index}) > 0 ? task_of.at({pool, index}) : 0;
    return ReplicaEndpoint{HostPlaceholder(k), PortOf(job.id, k, per_node)};
  };
  options.master_port = per_node > 1 ? PortOf(job.id, 63, per_node) : options.master_port;
  TY_ASSIGN_OR_RETURN(std::vector<Replica> replicas, PlanReplicas(job.job, options));
  TY_RETURN_IF_ERROR(
      RequireCommands(replicas, "the Slurm runtime runs a command on the cluster's nodes"));
  std::vector<std::string> tasks;
  for (const Replica& r : replicas) tasks.push_back(r.task_name);

  std::lock_guard lock(mu_);
  // Submitted before (a server that died before storing the run, an answer lost to an outage):
  // the same Slurm job is taken up again, never submitted twice. Our own submits are in the list
  // from the moment Slurm answers.
  TY_RETURN_IF_ERROR(Refresh(options_.launch_lookup_age));
  const std::string name = SlurmJobName(job.id, attempt);
  int64_t slurm_id = 0;
  if (const Ours* found = Find(0, job.id, attempt)) {
    slurm_id = found->job.job_id;
    LogJson(LogLevel::kInfo, "slurm_job_adopted",
            {{"job", std::to_string(job.id)}, {"slurm_job", std::to_string(slurm_id)}});
  } else {
    const fs::path dir = AttemptDir(job.id, attempt);
    SlurmSubmit submit;
    submit.components = ComponentsOf(job, replicas, options_);
    std::vector<int> component_tasks;
    std::string partitions;
    for (const SlurmComponent& c : submit.components) {
      component_tasks.push_back(c.tasks);
      partitions += (partitions.empty() ? "" : ",") + c.partition;
    }
    submit.name = name;
    submit.comment = "Trainyard " + job.job.name + " attempt " + std::to_string(attempt);
    if (const std::string tag = SlurmJobTag(job.id, attempt); !tag.empty()) {
      submit.comment += " " + tag;
    }
    submit.current_working_directory = dir.string();
    const char* path = std::getenv("PATH");
    submit.environment = {{"PATH", path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin"},
                          {"PYTHONUNBUFFERED", "1"}};
    submit.standard_output = (dir / "slurm-%j.out").string();
    submit.time_limit_minutes = TimeLimitMinutes(job.job);
    submit.script = BatchScript(dir / kTaskScript, component_tasks);
    // The submit ends before the lease may pass to another executor (given up otherwise: one
    // that reached Slurm all the same is found by its name and tag by the next launch).
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        lease_deadline - std::chrono::steady_clock::now());
    if (left <= std::chrono::milliseconds::zero()) {
      return Unavailable("the lease on job " + std::to_string(job.id) +
                         " ran out before its submit");
    }
    const std::string task_script =
        TaskScript(TaskScriptInput{dir, replicas, options_.tasks_per_node, component_tasks});
    TY_ASSIGN_OR_RETURN(slurm_id, SubmitInNewFolder(job.id, attempt, submit, task_script, left));
    SlurmJob submitted;
    submitted.job_id = slurm_id;
    submitted.name = name;
    submitted.comment = submit.comment;
    submitted.user_name = options_.user;
    submitted.state = "PENDING";
    submitted.reason = "None";
    ours_.push_back({ReplicaOwner{job.id, attempt}, std::move(submitted)});
    LogJson(LogLevel::kInfo, "slurm_job_submitted",
            {{"job", std::to_string(job.id)},
             {"attempt", attempt},
             {"slurm_job", std::to_string(slurm_id)},
             {"tasks", static_cast<int64_t>(replicas.size())},
             {"partition", partitions}});
  }
  Follow(job.id, attempt, tasks, slurm_id);
  JobRun run;
  run.attempt = attempt;
  for (const std::string& task : tasks) {
    run.replicas.push_back(
        ReplicaRun{task, ReplicaPhase::kPending, std::nullopt, 0, Handle(slurm_id)});
  }
  return run;
}

StatusOr<Observation> SlurmRuntime::Observe(const JobRecord& job, Timestamp now) {
  Observation out;
  out.next_change = now + std::chrono::duration_cast<std::chrono::microseconds>(options_.poll);
  if (!job.run || job.run->replicas.empty()) return out;
  const int attempt = job.run->attempt;
  const int64_t slurm_id = SlurmIdOf(job.run->replicas[0].handle).value_or(0);
  std::lock_guard lock(mu_);
  TY_RETURN_IF_ERROR(Refresh(options_.poll));
  const Ours* found = Find(slurm_id, job.id, attempt);
  std::vector<std::string> tasks;
  for (const ReplicaRun& r : job.run->replicas) tasks.push_back(r.task_name);
  if (found != nullptr) Follow(job.id, attempt, tasks, found->job.job_id);
  // Gone from Slurm (ended longer ago than MinJobAge, or never known) counts as ended.
  const bool ended = found == nullptr || SlurmJobEnded(found->job.state);
  const bool running = found != nullptr && found->job.state == "RUNNING";
  if (found != nullptr && found->job.state == "PENDING") {
    // Slurm holds the job (other users' work, a partition too small, a hold): its own words.
    out.waiting =
        "Slurm job " + std::to_string(found->job.job_id) + " is PENDING" +
        (found->job.reason.empty() || found->job.reason == "None" ? std::string()
                                                                  : " (" + found->job.reason + ")");
  }
  // Missing (not made yet) or refused (a link): nothing of it is read.
  const StatusOr<UniqueFd> attempt_dir = OpenAttemptFolder(job.id, attempt);
  for (const ReplicaRun& r : job.run->replicas) {
    const RunFiles wrote = ReadRunFiles(attempt_dir, r.task_name, std::to_string(r.restarts));
    ReplicaObservation seen;
    seen.task_name = r.task_name;
    seen.handle = r.handle;
    const std::string& exit_text = wrote.exit_text;
    if (auto code = ParseNumber<int>(exit_text.substr(0, exit_text.find('\n')))) {
      seen.phase = ReplicaPhase::kExited;
      seen.exit_code = *code;
    } else if (ended) {
      // Its allocation ended under it (a node failure, a preemption, a cancel from outside
      // Trainyard, Slurm's own time limit): no exit status will ever come.
      seen.phase = ReplicaPhase::kLost;
    } else if (running && wrote.started) {
      seen.phase = ReplicaPhase::kRunning;
    } else {
      seen.phase = ReplicaPhase::kPending;
    }
    out.replicas.push_back(std::move(seen));
  }
  return out;
}

StatusOr<std::string> SlurmRuntime::RestartReplica(const JobRecord& job, const ReplicaRun& replica,
                                                   Timestamp now, LeaseDeadline lease_deadline) {
  (void)now;
  if (!job.run) return FailedPrecondition("job " + std::to_string(job.id) + " has no run");
  if (std::chrono::steady_clock::now() >= lease_deadline) {
    return Unavailable("the lease on job " + std::to_string(job.id) + " ran out");
  }
  // The task's wrapper starts run n once restart.<n> appears (replica.restarts already counts
  // this restart), ending run n-1 first if it still runs.
  TY_ASSIGN_OR_RETURN(UniqueFd attempt_dir, OpenAttemptFolder(job.id, job.run->attempt));
  TY_ASSIGN_OR_RETURN(UniqueFd task_dir, TaskFolder(attempt_dir.get(), replica.task_name));
  TY_RETURN_IF_ERROR(MarkAt(task_dir.get(), "restart." + std::to_string(replica.restarts)));
  return replica.handle;
}

Status SlurmRuntime::Stop(const JobRecord& job) {
  std::lock_guard lock(mu_);
  std::vector<int64_t> ids;
  if (job.run) {
    for (const ReplicaRun& r : job.run->replicas) {
      if (auto id = SlurmIdOf(r.handle)) ids.push_back(*id);
    }
  }
  // A launch whose run was never stored: found by name.
  if (Refresh(options_.poll).ok()) {
    for (const Ours& o : ours_) {
      if (o.owner.job_id == job.id && !SlurmJobEnded(o.job.state)) ids.push_back(o.job.job_id);
    }
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  for (int64_t id : ids) {
    TY_RETURN_IF_ERROR(api_->Cancel(id));
    noticed_.erase(id);
    for (Ours& o : ours_) {
      if (o.job.job_id == id && !SlurmJobEnded(o.job.state)) o.job.state = "CANCELLED";
    }
  }
  return Status::Ok();
}

// A stop notice (services/model/stop_notice.h): every process of the job's Slurm jobs gets
// SIGTERM now, as `scancel --signal=TERM --full` sends it, the way a VM's shutdown script warns
// its workload; Stop cancels them once the notice runs out. Signalled once per Slurm job.
Status SlurmRuntime::Notice(const JobRecord& job) {
  std::lock_guard lock(mu_);
  if (!job.run) return Status::Ok();
  std::vector<int64_t> ids;
  for (const ReplicaRun& r : job.run->replicas) {
    if (auto id = SlurmIdOf(r.handle)) ids.push_back(*id);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  for (int64_t id : ids) {
    if (noticed_.contains(id)) continue;
    TY_RETURN_IF_ERROR(api_->Signal(id, "SIGTERM"));
    noticed_.insert(id);
  }
  return Status::Ok();
}

std::vector<ReplicaOwner> SlurmRuntime::JobsWithReplicas() {
  std::lock_guard lock(mu_);
  std::vector<ReplicaOwner> owners;
  if (!Refresh(options_.poll).ok()) return owners;  // cannot tell now: stop nothing
  for (const Ours& o : ours_) {
    if (!SlurmJobEnded(o.job.state)) owners.push_back(o.owner);
  }
  return owners;
}

Status SlurmRuntime::StopOtherAttempts(int64_t job_id, int keep) {
  std::lock_guard lock(mu_);
  TY_RETURN_IF_ERROR(Refresh(options_.poll));
  for (Ours& o : ours_) {
    if (o.owner.job_id != job_id || o.owner.attempt == keep || SlurmJobEnded(o.job.state)) {
      continue;
    }
    TY_RETURN_IF_ERROR(api_->Cancel(o.job.job_id));
    o.job.state = "CANCELLED";
  }
  return Status::Ok();
}

std::vector<LogLine> SlurmRuntime::CollectLogs(Timestamp now) {
  std::lock_guard lock(mu_);
  const bool known = Refresh(options_.poll).ok();
  return tailer_.Collect(now, [&](const fs::path& file) {
    if (!known) return false;  // slurmrestd is out: its tasks may still write
    auto it = slurm_job_of_output_.find(file);
    if (it == slurm_job_of_output_.end()) return true;
    for (const Ours& o : ours_) {
      if (o.job.job_id == it->second) {
        if (!SlurmJobEnded(o.job.state)) return false;
        break;
      }
    }
    return true;
  });
}

void SlurmRuntime::LogsStored() {
  std::lock_guard lock(mu_);
  tailer_.Stored();
  // The outputs the tailer let go of need no job to watch for any more.
  for (auto it = slurm_job_of_output_.begin(); it != slurm_job_of_output_.end();) {
    it = tailer_.Following(it->first) ? std::next(it) : slurm_job_of_output_.erase(it);
  }
}

}  // namespace trainyard::slurm
