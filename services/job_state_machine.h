#pragma once
// The one owner of CustomJob transitions. Storage applies a transition as a compare-and-set on
// (id, state, version); everything about which transitions exist and what they stamp lives here.
#include <optional>
#include <string>

#include "services/model/custom_job.h"
#include "services/status.h"

namespace trainyard {

// What a transition changes on the job row, besides the state itself.
struct JobTransition {
  JobState from = JobState::kUnspecified;
  JobState to = JobState::kUnspecified;
  Timestamp at{};
  std::string reason;                   // kept as a job event
  std::optional<Timestamp> start_time;  // stamped on the first RUNNING
  std::optional<Timestamp> end_time;    // stamped on a terminal state
  std::optional<RpcStatus> error;       // FAILED and CANCELLED carry one
};

class JobStateMachine {
 public:
  static bool IsAllowed(JobState from, JobState to);

  // Builds the transition of `job` to `to` at `now`, or FAILED_PRECONDITION if it is not allowed.
  static StatusOr<JobTransition> Transition(const CustomJob& job, JobState to, Timestamp now,
                                            std::string reason,
                                            std::optional<RpcStatus> error = std::nullopt);
};

}  // namespace trainyard
