#include "services/runtime/job_supervisor.h"

#include <algorithm>

#include "services/log.h"
#include "services/model/stop_notice.h"

namespace trainyard {
namespace {

Timestamp After(Timestamp t, Duration d) {
  return t + std::chrono::duration_cast<std::chrono::microseconds>(d);
}

// The stored run with what was observed now: phases, exit codes and handles; restarts are ours.
JobRun Merge(const JobRecord& job, const Observation& observation) {
  JobRun run = job.run.value_or(JobRun{job.attempt, {}});
  for (const ReplicaObservation& seen : observation.replicas) {
    auto it = std::find_if(run.replicas.begin(), run.replicas.end(),
                           [&](const ReplicaRun& r) { return r.task_name == seen.task_name; });
    if (it == run.replicas.end()) {
      run.replicas.push_back(
          ReplicaRun{seen.task_name, seen.phase, seen.exit_code, 0, seen.handle});
      continue;
    }
    it->phase = seen.phase;
    it->exit_code = seen.exit_code;
    if (!seen.handle.empty()) it->handle = seen.handle;
  }
  return run;
}

bool IsPrimary(const ReplicaRun& r) { return r.task_name == "workerpool0-0"; }

constexpr const char* kPrimarySucceeded = "the primary replica exited with status 0";

bool PrimarySucceeded(const JobRun& run) {
  return std::any_of(run.replicas.begin(), run.replicas.end(), [](const ReplicaRun& r) {
    return IsPrimary(r) && r.phase == ReplicaPhase::kExited && r.exit_code == 0;
  });
}

bool Failed(const ReplicaRun& r) {
  return r.phase == ReplicaPhase::kLost ||
         (r.phase == ReplicaPhase::kExited && r.exit_code.value_or(0) != 0);
}

// SIGABRT and SIGSEGV (as 128 + signal) and a vanished host are the platform's or the framework's
// trouble more often than the script's: Vertex retries the whole job for them.
bool Transient(const ReplicaRun& r) {
  return r.phase == ReplicaPhase::kLost || r.exit_code == 134 || r.exit_code == 139 ||
         r.exit_code == 6 || r.exit_code == 11;
}

std::string FailureMessage(const ReplicaRun& r) {
  if (r.phase == ReplicaPhase::kLost) return "The replica " + r.task_name + " was lost.";
  return "The replica " + r.task_name + " exited with a non-zero status of " +
         std::to_string(r.exit_code.value_or(-1)) + ".";
}

// When the last replica started, as far as the runtime says, and never before the job's last change
// (the launch) nor after now.
Timestamp AllRunningSince(const JobRecord& job, const Observation& observation, Timestamp now) {
  std::optional<Timestamp> last;
  for (const ReplicaObservation& r : observation.replicas) {
    if (!r.running_since) return now;  // the runtime does not know: now is the best we have
    last = last ? std::max(*last, *r.running_since) : *r.running_since;
  }
  if (!last) return now;
  const Timestamp floor = job.job.update_time.value_or(*last);
  return std::clamp(*last, std::min(floor, now), now);
}

std::optional<Timestamp> Earliest(std::optional<Timestamp> a, std::optional<Timestamp> b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}

// Builds the transition to `to` carrying `run`; a refused one (a bug) leaves the verdict empty.
void Move(SupervisorVerdict& verdict, const JobRecord& job, JobState to, Timestamp now,
          std::string reason, std::optional<RpcStatus> error, JobRun run,
          std::optional<Timestamp> next) {
  auto t = JobStateMachine::Transition(SnapshotOf(job.id, job.version, job.job), to, now,
                                       std::move(reason), std::move(error));
  if (!t.ok()) {
    // A rule that asks for a transition the state machine refuses is our bug: say so loudly.
    LogJson(LogLevel::kError, "supervisor_transition_refused",
            {{"job", job.job.name}, {"error", t.status().message()}});
    return;
  }
  verdict.transition = JobStateMachine::WithRun(std::move(t).value(), std::move(run), next);
}

void Fail(SupervisorVerdict& verdict, const JobRecord& job, Timestamp now, std::string message,
          Code code, JobRun run) {
  Move(verdict, job, JobState::kFailed, now, message, RpcStatusOf(code, message), std::move(run),
       std::nullopt);
  verdict.stop = true;
}

// A replica failed: restart it in place, retry the whole job, or fail, by Vertex's rules.
void OnReplicaFailure(SupervisorVerdict& verdict, const JobRecord& job, JobRun run,
                      const ReplicaRun& failed, Timestamp now, const SupervisorPolicy& policy) {
  const Scheduling* scheduling =
      job.job.job_spec.scheduling ? &*job.job.job_spec.scheduling : nullptr;
  const bool no_retries = scheduling && scheduling->disable_retries;
  const bool whole_gang = scheduling && scheduling->restart_job_on_worker_restart && !no_retries;
  const std::string what = FailureMessage(failed);
  if (no_retries) return Fail(verdict, job, now, what, Code::kInvalidArgument, std::move(run));
  if (!Transient(failed) && failed.restarts < policy.max_replica_restarts) {
    for (ReplicaRun& r : run.replicas) {
      if (r.task_name != failed.task_name && !whole_gang) continue;
      ++r.restarts;
      r.phase = ReplicaPhase::kPending;
      r.exit_code.reset();
      verdict.restart.push_back(r.task_name);
    }
    const int restarts =
        std::find_if(run.replicas.begin(), run.replicas.end(), [&](const ReplicaRun& r) {
          return r.task_name == failed.task_name;
        })->restarts;
    std::string reason = what + " Restarted " +
                         (whole_gang ? std::string("every replica") : failed.task_name) +
                         " in place (" + std::to_string(restarts) + " of " +
                         std::to_string(policy.max_replica_restarts) + ").";
    return Move(verdict, job, job.job.state, now, std::move(reason), std::nullopt, std::move(run),
                now);
  }
  if (run.attempt < policy.max_job_retries) {
    JobRun next{run.attempt + 1, {}};
    std::string reason = what + " Retrying the whole job (retry " + std::to_string(next.attempt) +
                         " of " + std::to_string(policy.max_job_retries) + ").";
    Move(verdict, job, JobState::kPending, now, std::move(reason), std::nullopt, std::move(next),
         now);
    if (verdict.transition) {
      verdict.transition = JobStateMachine::RetryingWholeJob(std::move(*verdict.transition));
    }
    verdict.stop = true;
    return;
  }
  Fail(verdict, job, now, what, Code::kInvalidArgument, std::move(run));
}

// `verdict`'s start (PENDING → RUNNING) followed by the run's end now: SUCCEEDED, through RUNNING.
// `started` is the job as the start left it.
void EndWithStart(SupervisorVerdict& verdict, const JobRecord& job, const CustomJob& started,
                  Timestamp now, JobRun run) {
  JobSnapshot running = SnapshotOf(job.id, job.version, started);
  running.state = JobState::kRunning;
  auto end = JobStateMachine::Transition(running, JobState::kSucceeded, now, kPrimarySucceeded);
  auto both =
      end.ok() ? JobStateMachine::Through(
                     std::move(*verdict.transition),
                     JobStateMachine::WithRun(std::move(end).value(), std::move(run), std::nullopt))
               : StatusOr<JobTransition>(end.status());
  if (!both.ok()) {
    LogJson(LogLevel::kError, "supervisor_transition_refused",
            {{"job", job.job.name}, {"error", both.status().message()}});
    verdict.transition.reset();
    return;
  }
  verdict.transition = std::move(both).value();
  verdict.stop = true;
}

const std::string& ReasonCodeOf(const JobRecord& job) {
  static const std::string none;
  return job.job.trainyard ? job.job.trainyard->reason_code : none;
}

bool RuntimeReason(const JobRecord& job) {
  const std::string& code = ReasonCodeOf(job);
  return code == kRuntimeWaiting || code == kRuntimeUnavailable;
}

// The reason the runtime gives the job now, set on `verdict` (its transition, or a new one to the
// state the job is in, with `run` and `next`) when the job's reason says something else: the
// runtime's word on why launched replicas wait; once it has none, or answers again after an
// outage, the reason it had given makes way for the admission's.
void NoteRuntimeReason(SupervisorVerdict& verdict, const JobRecord& job,
                       const Observation& observation, bool waiting, Timestamp now,
                       const JobRun& run, std::optional<Timestamp> next) {
  std::optional<SchedulingNote> note;
  if (waiting && !observation.waiting.empty()) {
    note = SchedulingNote{std::string(kRuntimeWaiting), observation.waiting};
  } else if (RuntimeReason(job)) {
    note = SchedulingNote{"ADMITTED", job.job.state == JobState::kPending || waiting
                                          ? "launched; waiting for every replica to start"
                                          : "every replica started"};
  }
  if (!note) return;
  const std::string* message = job.job.trainyard ? &job.job.trainyard->reason_message : nullptr;
  if (ReasonCodeOf(job) == note->code && message != nullptr && *message == note->message) return;
  if (!verdict.transition) {
    Move(verdict, job, job.job.state, now, note->message, std::nullopt, run, next);
    if (!verdict.transition) return;
  }
  verdict.transition = JobStateMachine::WithNote(std::move(*verdict.transition), std::move(*note));
}

}  // namespace

std::optional<JobTransition> RuntimeUnavailable(const JobRecord& job, Timestamp now,
                                                const std::string& why) {
  if (job.job.state != JobState::kPending && job.job.state != JobState::kRunning) {
    return std::nullopt;
  }
  if (ReasonCodeOf(job) == kRuntimeUnavailable) return std::nullopt;
  const std::string message = "the runtime cannot be asked about the replicas (" + why +
                              "); the job keeps its state and the runtime is asked again";
  auto t = JobStateMachine::Transition(SnapshotOf(job.id, job.version, job.job), job.job.state, now,
                                       message);
  if (!t.ok()) return std::nullopt;
  // Due again now; the executor's backoff says when it is really looked at.
  return JobStateMachine::WithNote(JobStateMachine::WithRun(std::move(t).value(), job.run, now),
                                   SchedulingNote{std::string(kRuntimeUnavailable), message});
}

namespace {

// When the job's DWS flex-start VMs reach their seven days, if it runs on any: from their
// provisioning (the admission), boot and image pull included.
std::optional<Timestamp> FlexStartEnd(const CustomJob& job) {
  if (!job.trainyard || !job.trainyard->admitted_at) return std::nullopt;
  for (const PlacedPoolStatus& pool : job.trainyard->pools) {
    if (pool.consumption_model == "FLEX_START") {
      return After(*job.trainyard->admitted_at, kFlexStartMaxRun);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<Timestamp> RunDeadline(const CustomJob& job) {
  if (!job.start_time) return std::nullopt;
  const Timestamp timeout = After(*job.start_time, JobTimeout(job.job_spec));
  const std::optional<Timestamp> flex = FlexStartEnd(job);
  return flex ? std::min(timeout, *flex) : timeout;
}

SupervisorVerdict Supervise(const JobRecord& job, const std::optional<Observation>& observation,
                            Timestamp now, const SupervisorPolicy& policy) {
  SupervisorVerdict verdict;
  const JobState state = job.job.state;
  if (state == JobState::kCancelling) {
    const bool any_up =
        observation && std::any_of(observation->replicas.begin(), observation->replicas.end(),
                                   [](const ReplicaObservation& r) {
                                     return r.phase == ReplicaPhase::kRunning ||
                                            r.phase == ReplicaPhase::kPending;
                                   });
    if (any_up) {
      verdict.stop = true;
      verdict.look_again = After(now, policy.poll);
      return verdict;
    }
    JobRun run = observation ? Merge(job, *observation) : job.run.value_or(JobRun{job.attempt, {}});
    Move(verdict, job, JobState::kCancelled, now, "every replica stopped after the cancel",
         RpcStatusOf(Code::kCancelled, "CANCELED"), std::move(run), std::nullopt);
    return verdict;
  }
  if (state != JobState::kPending && state != JobState::kRunning) return verdict;
  if (!observation) {
    verdict.look_again = After(now, policy.poll);
    return verdict;
  }
  JobRun run = Merge(job, *observation);
  // A replica that saves and exits at the warning, as a trainer should, waits for the stop.
  verdict.notice = IsStopNotice(ReasonCodeOf(job));
  const std::optional<Timestamp> deadline = RunDeadline(job.job);
  if (deadline && now >= *deadline) {
    const std::optional<Timestamp> flex = FlexStartEnd(job.job);
    if (flex && *deadline == *flex) {
      Fail(verdict, job, now,
           "The job's DWS flex-start VMs reached their maximum run duration of 7 days "
           "(604800s from provisioning) and were stopped.",
           Code::kDeadlineExceeded, std::move(run));
      return verdict;
    }
    const auto seconds =
        std::chrono::duration_cast<std::chrono::seconds>(*deadline - *job.job.start_time);
    Fail(verdict, job, now,
         "The job ran longer than its scheduling.timeout of " + std::to_string(seconds.count()) +
             "s and was stopped.",
         Code::kDeadlineExceeded, std::move(run));
    return verdict;
  }
  for (const ReplicaRun& r : run.replicas) {
    if (Failed(r) && verdict.notice) {
      verdict.look_again = After(now, policy.poll);
      return verdict;
    }
    if (Failed(r)) {
      const ReplicaRun failed = r;
      OnReplicaFailure(verdict, job, std::move(run), failed, now, policy);
      return verdict;
    }
  }
  // Started: running, or already done (a pass that came late may find a short run finished).
  const bool all_up =
      !run.replicas.empty() &&
      std::all_of(run.replicas.begin(), run.replicas.end(), [](const ReplicaRun& r) {
        return r.phase == ReplicaPhase::kRunning ||
               (r.phase == ReplicaPhase::kExited && r.exit_code == 0);
      });
  const bool any_done =
      std::any_of(run.replicas.begin(), run.replicas.end(),
                  [](const ReplicaRun& r) { return r.phase == ReplicaPhase::kExited; });
  // Something already exited: look again at once rather than at the runtime's next change.
  const std::optional<Timestamp> next =
      any_done ? now : observation->next_change.value_or(After(now, policy.poll));
  if (state == JobState::kRunning && PrimarySucceeded(run)) {
    Move(verdict, job, JobState::kSucceeded, now, kPrimarySucceeded, std::nullopt, std::move(run),
         std::nullopt);
    verdict.stop = true;
    return verdict;
  }
  if (state == JobState::kPending && all_up) {
    const Timestamp at = AllRunningSince(job, *observation, now);
    // The deadline counts from the first start, which this transition stamps when it is the first.
    CustomJob started = job.job;
    started.start_time = job.job.start_time.value_or(at);
    std::string reason = job.job.start_time || run.attempt > 0
                             ? "all replicas are running again, resuming from the last checkpoint"
                             : "all replicas are running";
    const std::optional<Timestamp> run_deadline = RunDeadline(started);
    const bool ended = PrimarySucceeded(run);
    Move(verdict, job, JobState::kRunning, at, std::move(reason), std::nullopt,
         ended ? JobRun{} : std::move(run), Earliest(next, run_deadline));
    NoteRuntimeReason(verdict, job, *observation, /*waiting=*/false, now, JobRun{}, std::nullopt);
    // A run that started and ended since the last look (shorter than the runtime's passes, or a
    // pass that came late): its start and its end in one write.
    if (ended && verdict.transition) EndWithStart(verdict, job, started, now, std::move(run));
    if (!ended && observation->succeeds_at &&
        (!run_deadline || *observation->succeeds_at < *run_deadline)) {
      verdict.succeeds_at = observation->succeeds_at;
    }
    return verdict;
  }
  if (state == JobState::kPending && !job.run) {
    // Just launched: the run (its handles) is stored before anything else happens.
    Move(verdict, job, JobState::kPending, now,
         "replicas launched (attempt " + std::to_string(run.attempt + 1) +
             "); waiting for every one to start",
         std::nullopt, run, next);
    NoteRuntimeReason(verdict, job, *observation, /*waiting=*/true, now, run, next);
    return verdict;
  }
  NoteRuntimeReason(verdict, job, *observation, state == JobState::kPending, now, run,
                    Earliest(next, deadline));
  if (!verdict.transition) verdict.look_again = Earliest(next, deadline);
  return verdict;
}

}  // namespace trainyard
