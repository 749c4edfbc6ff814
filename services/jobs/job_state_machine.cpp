#include "services/jobs/job_state_machine.h"

#include "services/jobs/job_state_names.h"

namespace trainyard {

JobSnapshot SnapshotOf(int64_t id, int64_t version, const CustomJob& job) {
  return JobSnapshot{id, version, job.state, job.start_time.has_value()};
}

bool JobStateMachine::IsAllowed(JobState from, JobState to) {
  using S = JobState;
  switch (from) {
    case S::kQueued:
      return to == S::kPending || to == S::kFailed || to == S::kCancelling;
    case S::kPending:
      // Back to QUEUED when capacity is lost before the gang started (preemption, stockout).
      // PENDING again when the gang stops for a repair and when it resumes after one.
      return to == S::kRunning || to == S::kQueued || to == S::kPending || to == S::kFailed ||
             to == S::kCancelling;
    case S::kRunning:
      // Back to PENDING when the job is restarted on new capacity (spot preemption, repair).
      // RUNNING again when a replica restarts in place (the job stays RUNNING, as on Vertex).
      return to == S::kSucceeded || to == S::kFailed || to == S::kPending || to == S::kQueued ||
             to == S::kRunning || to == S::kCancelling;
    case S::kCancelling:
      // A job may finish on its own before the cancel lands; Vertex then reports that outcome.
      return to == S::kCancelled || to == S::kSucceeded || to == S::kFailed;
    default:
      return false;
  }
}

StatusOr<JobTransition> JobStateMachine::Transition(const JobSnapshot& job, JobState to,
                                                    Timestamp now, std::string reason,
                                                    std::optional<RpcStatus> error) {
  if (!IsAllowed(job.state, to)) {
    return FailedPrecondition("job " + std::to_string(job.id) + " is " +
                              std::string(StateNameForMessage(job.state)) + "; it cannot become " +
                              std::string(StateNameForMessage(to)));
  }
  JobTransition t;
  t.from_ = job.state;
  t.to_ = to;
  t.at_ = now;
  t.reason_ = std::move(reason);
  if (to == JobState::kRunning && !job.started) t.start_time_ = now;
  if (IsTerminal(to)) {
    t.end_time_ = now;
    t.ends_admission_ = true;
  }
  if (to == JobState::kCancelled && !error) error = RpcStatusOf(Code::kCancelled, "CANCELED");
  if (to == JobState::kFailed && !error)
    error = RpcStatusOf(Code::kInternal, "Internal error occurred.");
  t.error_ = std::move(error);
  return t;
}

StatusOr<JobTransition> JobStateMachine::Admit(const JobSnapshot& job, Timestamp now,
                                               JobAdmission admission, std::string message) {
  if (job.state != JobState::kQueued) {
    return FailedPrecondition("only a QUEUED job is admitted; job " + std::to_string(job.id) +
                              " is " + std::string(StateNameForMessage(job.state)));
  }
  TY_ASSIGN_OR_RETURN(JobTransition t, Transition(job, JobState::kPending, now, message));
  t.next_action_at_ =
      now + std::chrono::duration_cast<std::chrono::microseconds>(admission.startup);
  t.admission_ = std::move(admission);
  t.note_ = SchedulingNote{"ADMITTED", std::move(message)};
  return t;
}

StatusOr<JobTransition> JobStateMachine::FailInQueue(const JobSnapshot& job, Timestamp now,
                                                     std::string message) {
  if (job.state != JobState::kQueued) {
    return FailedPrecondition("job " + std::to_string(job.id) + " is not QUEUED");
  }
  TY_ASSIGN_OR_RETURN(JobTransition t, Transition(job, JobState::kFailed, now, message,
                                                  RpcStatusOf(Code::kResourceExhausted, message)));
  t.note_ = SchedulingNote{};
  return t;
}

namespace {

// The gang lost its capacity or a node: PENDING and RUNNING jobs only.
Status RequireAdmitted(const JobSnapshot& job) {
  if (job.state == JobState::kPending || job.state == JobState::kRunning) return Status::Ok();
  return FailedPrecondition("job " + std::to_string(job.id) + " is " +
                            std::string(StateNameForMessage(job.state)) +
                            "; only a PENDING or RUNNING job holds capacity");
}

}  // namespace

StatusOr<JobTransition> JobStateMachine::Requeue(const JobSnapshot& job, Timestamp now,
                                                 std::string message, bool spot_restart,
                                                 std::optional<Timestamp> progress_saved_at) {
  TY_RETURN_IF_ERROR(RequireAdmitted(job));
  TY_ASSIGN_OR_RETURN(JobTransition t, Transition(job, JobState::kQueued, now, message));
  t.ends_admission_ = true;
  t.clears_admission_ = true;
  t.interrupts_run_ = job.state == JobState::kRunning;
  if (t.interrupts_run_) t.progress_saved_at_ = progress_saved_at;
  t.spot_restart_ = spot_restart;
  t.stops_replicas_ = true;
  t.note_ = SchedulingNote{"PREEMPTED", std::move(message)};
  return t;
}

StatusOr<JobTransition> JobStateMachine::FailAdmitted(const JobSnapshot& job, Timestamp now,
                                                      std::string message, RpcStatus error) {
  TY_RETURN_IF_ERROR(RequireAdmitted(job));
  TY_ASSIGN_OR_RETURN(JobTransition t, Transition(job, JobState::kFailed, now, std::move(message),
                                                  std::move(error)));
  t.note_ = SchedulingNote{};
  return t;
}

StatusOr<JobTransition> JobStateMachine::Stockout(const JobSnapshot& job, Timestamp now,
                                                  std::string message) {
  RpcStatus error = RpcStatusOf(Code::kResourceExhausted, message);
  return FailAdmitted(job, now, std::move(message), std::move(error));
}

StatusOr<JobTransition> JobStateMachine::StopForRepair(const JobSnapshot& job, Timestamp now,
                                                       std::string message,
                                                       std::optional<JobRun> run) {
  TY_RETURN_IF_ERROR(RequireAdmitted(job));
  TY_ASSIGN_OR_RETURN(JobTransition t, Transition(job, JobState::kPending, now, message));
  t.interrupts_run_ = job.state == JobState::kRunning;
  t.stops_replicas_ = true;
  t.note_ = SchedulingNote{"NODE_REPAIR", std::move(message)};
  t.run_ = std::move(run);
  return t;
}

StatusOr<JobTransition> JobStateMachine::Cancel(const JobSnapshot& job, Timestamp now) {
  TY_ASSIGN_OR_RETURN(JobTransition t,
                      Transition(job, JobState::kCancelling, now, "cancel requested"));
  t.next_action_at_ = now;  // the runtime stops the job's replicas next
  return t;
}

StatusOr<JobTransition> JobStateMachine::Through(JobTransition first, JobTransition second) {
  if (first.to_ != JobState::kRunning || second.from_ != first.to_ || second.at_ < first.at_ ||
      first.admission_ || first.via_ || second.via_ || first.from_ == first.to_ ||
      second.from_ == second.to_) {
    return FailedPrecondition("a transition passes only through the start of a run it ends");
  }
  JobTransition t = std::move(second);
  t.via_ = JobPassage{first.to_, first.at_, std::move(first.reason_)};
  t.from_ = first.from_;
  if (first.start_time_) t.start_time_ = first.start_time_;
  if (!t.note_) t.note_ = std::move(first.note_);
  if (!t.image_uri_) t.image_uri_ = std::move(first.image_uri_);
  return t;
}

JobTransition JobStateMachine::WithRun(JobTransition t, std::optional<JobRun> run,
                                       std::optional<Timestamp> next_action_at) {
  t.run_ = std::move(run);
  t.next_action_at_ = next_action_at;
  return t;
}

JobTransition JobStateMachine::RetryingWholeJob(JobTransition t) {
  t.stops_replicas_ = true;
  // The retry resumes from the last checkpoint (AIP_CHECKPOINT_DIR outlives the attempt).
  t.interrupts_run_ = t.from_ == JobState::kRunning;
  return t;
}

JobTransition JobStateMachine::WithNote(JobTransition t, SchedulingNote note) {
  t.note_ = std::move(note);
  return t;
}

JobTransition JobStateMachine::CachingImage(JobTransition t, std::optional<std::string> image_uri) {
  if (t.entered(JobState::kRunning)) t.image_uri_ = std::move(image_uri);
  return t;
}

StatusOr<JobTransition> JobStateMachine::ResumeAfterRepair(const JobSnapshot& job, Timestamp now,
                                                           Timestamp resume_at,
                                                           std::string message) {
  if (job.state != JobState::kPending) {
    return FailedPrecondition("job " + std::to_string(job.id) + " is not waiting for a repair");
  }
  TY_ASSIGN_OR_RETURN(JobTransition t, Transition(job, JobState::kPending, now, message));
  t.next_action_at_ = resume_at;
  t.requires_nodes_up_ = true;
  t.note_ = SchedulingNote{"ADMITTED", std::move(message)};
  return t;
}

}  // namespace trainyard
