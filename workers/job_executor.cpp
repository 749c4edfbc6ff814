#include "workers/job_executor.h"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include "services/jobs/job_record_update.h"
#include "services/jobs/job_state_machine.h"
#include "services/log.h"
#include "services/thread_name.h"
#include "workers/background_priority.h"

namespace trainyard {

std::string DefaultExecutorOwner() {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  std::random_device rd;
  return std::string(host) + ":" + std::to_string(getpid()) + ":" + std::to_string(rd() % 100000);
}

std::optional<JobExecutor::Step> JobExecutor::StepJob(const JobRecord& record, Timestamp now) {
  const JobState state = record.job.state;
  std::optional<Observation> observation;
  if (state == JobState::kCancelling) {
    Status stopped = runtime_.Stop(record);
    if (!stopped.ok()) {
      LogJson(LogLevel::kWarn, "replica_stop_failed",
              {{"job", record.job.name}, {"error", stopped.message()}});
    }
  }
  if (state == JobState::kPending && !record.run) {
    JobRecord launched_view = record;
    auto held = last_held_.find(record.id);
    if (held != last_held_.end() && held->second.version == record.version) {
      launched_view.run = held->second.run;  // launched at the last pass, its start held
    } else {
      auto launched = runtime_.Launch(record, record.attempt, now, HeldUntil());
      if (!launched.ok()) {
        // A job that cannot be planned never will be: fail it rather than retry it forever.
        if (launched.status().code() == Code::kInvalidArgument) {
          auto failed = JobStateMachine::Transition(
              SnapshotOf(record.id, record.version, record.job), JobState::kFailed, now,
              "cannot launch: " + launched.status().message(),
              RpcStatusOf(Code::kInvalidArgument, launched.status().message()));
          if (!failed.ok()) return std::nullopt;
          SupervisorVerdict verdict;
          verdict.transition = std::move(failed).value();
          return Step{std::move(verdict), &record};
        }
        return RuntimeFailed(record, now, "replica_launch_failed", launched.status());
      }
      launched_view.run = std::move(launched).value();
    }
    auto seen = runtime_.Observe(launched_view, now);
    if (!seen.ok()) {
      return RuntimeFailed(record, now, "replica_observe_failed", seen.status());
    }
    observation = std::move(seen).value();
    // The launch may have taken long (a Slurm submit): what it started is adopted by whoever holds
    // the job now; this executor writes nothing for it.
    if (!LeaseHeld()) return LeaseLost(record, "launch");
  } else if (record.run || state == JobState::kCancelling) {
    auto seen = runtime_.Observe(record, now);
    if (!seen.ok()) {
      return RuntimeFailed(record, now, "replica_observe_failed", seen.status());
    }
    observation = std::move(seen).value();
  }
  backoff_.Answered(record.id);
  SupervisorVerdict verdict = Supervise(record, observation, now, options_.policy);
  if (verdict.notice) {
    Status warned = runtime_.Notice(record);
    if (!warned.ok()) {
      LogJson(LogLevel::kWarn, "replica_notice_failed",
              {{"job", record.job.name}, {"error", warned.message()}});
    }
  }
  if (!verdict.transition) return std::nullopt;
  if (!verdict.restart.empty() && !LeaseHeld()) return std::nullopt;
  // Restarts in place happen before the transition that counts them is written: a crash between
  // the two loses a count, never a replica. They restart the run the transition carries, which
  // for a launch that found its replicas already exited is not yet in the row.
  JobRecord restarting = record;
  restarting.run = verdict.transition->run();
  std::optional<JobRun> run = verdict.transition->run();
  for (const std::string& task : verdict.restart) {
    if (!run) break;
    for (ReplicaRun& replica : run->replicas) {
      if (replica.task_name != task) continue;
      auto handle = runtime_.RestartReplica(restarting, replica, now, HeldUntil());
      if (!handle.ok()) {
        return RuntimeFailed(record, now, "replica_restart_failed", handle.status(), task);
      }
      replica.handle = std::move(handle).value();
      metrics_.Restarted(1);
    }
  }
  if (!verdict.restart.empty() && !LeaseHeld()) return LeaseLost(record, "restart");
  if (!verdict.restart.empty()) {  // the restarted replicas' new handles
    const std::optional<Timestamp> next = verdict.transition->next_action_at();
    verdict.transition =
        JobStateMachine::WithRun(std::move(*verdict.transition), std::move(run), next);
  }
  verdict.transition = JobStateMachine::CachingImage(std::move(*verdict.transition),
                                                     PrimaryImage(record.job.job_spec));
  return Step{std::move(verdict), &record};
}

namespace {

// The attempt whose replicas the row still wants, if any: the stored run's while the job is
// live; for a PENDING job without a stored run, its current attempt's, because a process that died
// between launching them and storing the run left them for the next launch to adopt.
std::optional<int> WantedAttempt(const JobRecord& row) {
  const JobState state = row.job.state;
  if (row.run && (state == JobState::kPending || state == JobState::kRunning ||
                  state == JobState::kCancelling)) {
    return row.run->attempt;
  }
  if (!row.run && state == JobState::kPending) return row.attempt;
  return std::nullopt;
}

}  // namespace

// Replicas whose job no longer wants them (requeued or repaired by the failure simulator, retried,
// finished, deleted, taken over after a restart) are stopped: nothing runs that no row accounts
// for, and no two attempts of a job run at once.
void JobExecutor::StopStrays() {
  std::vector<ReplicaOwner> owners = runtime_.JobsWithReplicas();
  if (owners.empty()) return;
  std::vector<int64_t> ids;
  for (const ReplicaOwner& o : owners) {
    if (ids.empty() || ids.back() != o.job_id) ids.push_back(o.job_id);
  }
  auto records = leases_.ByIds(ids);
  if (!records.ok()) return;
  std::map<int64_t, const JobRecord*> by_id;
  for (const JobRecord& r : *records) by_id[r.id] = &r;
  for (int64_t id : ids) {
    auto it = by_id.find(id);
    std::optional<int> wanted = it == by_id.end() ? std::nullopt : WantedAttempt(*it->second);
    Status stopped = Status::Ok();
    if (!wanted) {
      JobRecord gone;
      gone.id = id;
      if (it != by_id.end()) gone = *it->second;
      stopped = runtime_.Stop(gone);
    } else if (std::any_of(owners.begin(), owners.end(), [&](const ReplicaOwner& o) {
                 return o.job_id == id && o.attempt != *wanted;
               })) {
      stopped = runtime_.StopOtherAttempts(id, *wanted);
    }
    if (!stopped.ok()) {
      LogJson(LogLevel::kWarn, "stray_stop_failed",
              {{"job", std::to_string(id)}, {"error", stopped.message()}});
    }
  }
}

StatusOr<int> JobExecutor::RunOnce() {
  // A lease outlives three missed heartbeats; renewing every pass rewrote every leased row each
  // time (a thousand rows a pass under load) for nothing.
  const auto wall = std::chrono::steady_clock::now();
  if (!last_heartbeat_ || wall - *last_heartbeat_ >= options_.lease / 3) {
    TY_RETURN_IF_ERROR(leases_.Heartbeat(options_.owner, options_.lease).status());
    last_heartbeat_ = wall;
  }
  TY_ASSIGN_OR_RETURN(ClaimCounts claimed,
                      leases_.Claim(options_.owner, options_.batch, options_.lease));
  metrics_.Claimed(claimed);
  Timestamp now = clock_.Now();
  last_pass_at_ = now;
  last_held_ = std::move(held_);
  held_.clear();
  TY_ASSIGN_OR_RETURN(std::vector<JobRecord> due, leases_.Due(options_.owner, now, options_.batch));
  std::vector<Step> steps;
  std::vector<StateUpdate> updates;
  for (size_t i = 0; i < due.size(); ++i) {
    const JobRecord& record = due[i];
    if (backoff_.Waiting(record.id, std::chrono::steady_clock::now())) continue;
    if (!LeaseHeld()) {
      LogJson(LogLevel::kWarn, "executor_pass_outlived_lease",
              {{"steps_left", static_cast<int64_t>(due.size() - i)}});
      break;
    }
    std::optional<Step> step = StepJob(record, now);
    if (!step || HoldsStart(record, *step, now)) continue;
    // The transition moves into the update; the step keeps what follows the commit (the stop).
    // The row as read here is what the store computes the writes from (no read of its own).
    updates.push_back(StateUpdate{record.id,
                                  record.version,
                                  std::move(*step->verdict.transition),
                                  options_.owner,
                                  BasisOf(record),
                                  {}});
    steps.push_back(std::move(*step));
  }
  // One transaction for the whole pass: one commit instead of one per step.
  TY_ASSIGN_OR_RETURN(std::vector<bool> applied, jobs_.ApplyTransitions(updates));
  int count = 0;
  for (size_t i = 0; i < applied.size(); ++i) {
    if (!applied[i]) continue;
    ++count;
    const JobRecord& record = *steps[i].record;
    // Stops follow the commit: a job is never FAILED or retried in the row while its replicas
    // were already killed for a transition that then lost its compare-and-set.
    if (steps[i].verdict.stop) {
      Status stopped = runtime_.Stop(record);
      if (!stopped.ok()) {
        LogJson(LogLevel::kWarn, "replica_stop_failed",
                {{"job", record.job.name}, {"error", stopped.message()}});
      }
    }
    runtime_.Applied(record, updates[i].transition);
    metrics_.Applied(updates[i].transition.to());
    if (updates[i].transition.entered(JobState::kRunning) && record.job.create_time) {
      metrics_.Started(*record.job.create_time, now);
    }
    LogJson(LogLevel::kDebug, "job_transition",
            {{"job", record.job.name},
             {"to", static_cast<int>(updates[i].transition.to())},
             {"reason", updates[i].transition.reason()}});
  }
  StopStrays();
  AppendLogs(clock_.Now());
  return count;
}

bool JobExecutor::HoldsStart(const JobRecord& record, const Step& step, Timestamp now) {
  const JobTransition& t = *step.verdict.transition;
  if (!step.verdict.succeeds_at || t.from() != JobState::kPending || t.to() != JobState::kRunning ||
      !t.run() || !step.verdict.restart.empty()) {
    return false;
  }
  if (clock_.WallFor(*step.verdict.succeeds_at - now) > options_.idle_tick) return false;
  held_[record.id] = HeldStart{record.version, *t.run(), *step.verdict.succeeds_at};
  return true;
}

std::optional<JobExecutor::Step> JobExecutor::RuntimeFailed(const JobRecord& record, Timestamp now,
                                                            const char* what, const Status& status,
                                                            std::string_view task) {
  const auto wait = backoff_.Failed(record.id, std::chrono::steady_clock::now());
  std::vector<LogField> fields = {{"job", record.job.name}};
  if (!task.empty()) fields.emplace_back("task", task);
  fields.emplace_back("error", status.message());
  fields.emplace_back("retry_in_ms", static_cast<int64_t>(wait.count()));
  LogJson(LogLevel::kWarn, what, fields);
  if (status.code() != Code::kUnavailable) return std::nullopt;
  std::optional<JobTransition> noted = RuntimeUnavailable(record, now, status.message());
  if (!noted) return std::nullopt;
  SupervisorVerdict verdict;
  verdict.transition = std::move(noted);
  return Step{std::move(verdict), &record};
}

bool JobExecutor::LeaseHeld() const { return std::chrono::steady_clock::now() < HeldUntil(); }

LeaseDeadline JobExecutor::HeldUntil() const {
  if (!last_heartbeat_) return std::chrono::steady_clock::time_point::min();
  return *last_heartbeat_ + options_.lease - options_.lease / 4;
}

std::optional<JobExecutor::Step> JobExecutor::LeaseLost(const JobRecord& record, const char* call) {
  LogJson(LogLevel::kWarn, "executor_lease_ran_out", {{"job", record.job.name}, {"during", call}});
  return std::nullopt;
}

void JobExecutor::AppendLogs(Timestamp now) {
  std::vector<LogLine> lines = runtime_.CollectLogs(now);
  if (!lines.empty() && options_.logs != nullptr) {
    Status appended = options_.logs->Append(lines);
    if (!appended.ok()) {
      // Not lost: the runtime hands the same lines over again next pass.
      LogJson(LogLevel::kWarn, "job_log_append_failed",
              {{"lines", static_cast<int64_t>(lines.size())}, {"error", appended.message()}});
      return;
    }
  }
  runtime_.LogsStored();
}

void JobExecutor::Start() {
  stop_ = false;
  thread_ = std::thread([this] {
    NameThisThread("ty-runtime");
    LowerThisThreadsPriority();
    Loop();
  });
}

void JobExecutor::Stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  auto released = leases_.ReleaseAll(options_.owner);
  if (!released.ok()) {
    LogJson(LogLevel::kWarn, "lease_release_failed", {{"error", released.status().message()}});
    return;
  }
  released_ = std::move(released).value();
}

std::chrono::milliseconds JobExecutor::IdleWait() {
  // Sleep until the earliest step we hold falls due (in wall time: virtual time may run faster),
  // but never longer than the tick, which is how soon newly admitted jobs are claimed. A step that
  // was due at the last pass and still did not apply waits the tick, so it cannot spin the loop;
  // one that fell due since then runs at once.
  // A held start is due at its run's end, which its row does not say.
  std::optional<Timestamp> held;
  for (const auto& [id, start] : held_) {
    held = held ? std::min(*held, start.succeeds_at) : start.succeeds_at;
  }
  auto next = leases_.NextDue(options_.owner);
  if (!next.ok() || !*next || **next <= last_pass_at_) {
    if (!held) return options_.idle_tick;
    next = std::optional<Timestamp>(*held);
  } else if (held) {
    next = std::optional<Timestamp>(std::min(**next, *held));
  }
  const std::chrono::microseconds wall = clock_.WallFor(**next - clock_.Now());
  if (wall.count() <= 0) return std::chrono::milliseconds(0);
  return std::min(std::chrono::ceil<std::chrono::milliseconds>(wall), options_.idle_tick);
}

void JobExecutor::Loop() {
  auto last_pass = std::chrono::steady_clock::now();
  while (!stop_) {
    metrics_.Deferred(DeferToRequests(options_.deferral, last_pass, mu_, wake_, stop_));
    last_pass = std::chrono::steady_clock::now();
    auto applied = RunOnce();
    if (!applied.ok()) {
      LogJson(LogLevel::kWarn, "executor_pass_failed", {{"error", applied.status().message()}});
    }
    // Busy: go again at once. Idle: wait for the next due step (or until stopped).
    if (applied.ok() && *applied > 0) continue;
    const auto wait = applied.ok() ? IdleWait() : options_.idle_tick;
    std::unique_lock lock(mu_);
    wake_.wait_for(lock, wait, [this] { return stop_.load(); });
  }
}

}  // namespace trainyard
