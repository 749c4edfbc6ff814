#include "services/job_state_machine.h"

#include "services/job_state_names.h"

namespace trainyard {

bool JobStateMachine::IsAllowed(JobState from, JobState to) {
  using S = JobState;
  switch (from) {
    case S::kQueued:
      return to == S::kPending || to == S::kFailed || to == S::kCancelling;
    case S::kPending:
      // Back to QUEUED when capacity is lost before the gang started (preemption, stockout).
      return to == S::kRunning || to == S::kQueued || to == S::kFailed || to == S::kCancelling;
    case S::kRunning:
      // Back to PENDING when the job is restarted on new capacity (spot preemption, repair).
      return to == S::kSucceeded || to == S::kFailed || to == S::kPending || to == S::kQueued ||
             to == S::kCancelling;
    case S::kCancelling:
      // A job may finish on its own before the cancel lands; Vertex then reports that outcome.
      return to == S::kCancelled || to == S::kSucceeded || to == S::kFailed;
    default:
      return false;
  }
}

StatusOr<JobTransition> JobStateMachine::Transition(const CustomJob& job, JobState to,
                                                    Timestamp now, std::string reason,
                                                    std::optional<RpcStatus> error) {
  if (!IsAllowed(job.state, to)) {
    return FailedPrecondition(std::string("job ") + job.name + " is " +
                              std::string(StateNameForMessage(job.state)) + "; it cannot become " +
                              std::string(StateNameForMessage(to)));
  }
  JobTransition t;
  t.from = job.state;
  t.to = to;
  t.at = now;
  t.reason = std::move(reason);
  if (to == JobState::kRunning && !job.start_time) t.start_time = now;
  if (IsTerminal(to)) t.end_time = now;
  if (to == JobState::kCancelled && !error) error = RpcStatus{1, "CANCELED"};
  if (to == JobState::kFailed && !error) error = RpcStatus{13, "Internal error occurred."};
  t.error = std::move(error);
  return t;
}

}  // namespace trainyard
