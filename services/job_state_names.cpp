#include "services/job_state_names.h"

namespace trainyard {

std::string_view StateNameForMessage(JobState state) {
  switch (state) {
    case JobState::kUnspecified:
      return "JOB_STATE_UNSPECIFIED";
    case JobState::kQueued:
      return "JOB_STATE_QUEUED";
    case JobState::kPending:
      return "JOB_STATE_PENDING";
    case JobState::kRunning:
      return "JOB_STATE_RUNNING";
    case JobState::kSucceeded:
      return "JOB_STATE_SUCCEEDED";
    case JobState::kFailed:
      return "JOB_STATE_FAILED";
    case JobState::kCancelling:
      return "JOB_STATE_CANCELLING";
    case JobState::kCancelled:
      return "JOB_STATE_CANCELLED";
    case JobState::kPaused:
      return "JOB_STATE_PAUSED";
    case JobState::kExpired:
      return "JOB_STATE_EXPIRED";
    case JobState::kUpdating:
      return "JOB_STATE_UPDATING";
    case JobState::kPartiallySucceeded:
      return "JOB_STATE_PARTIALLY_SUCCEEDED";
  }
  return "JOB_STATE_UNSPECIFIED";
}

}  // namespace trainyard
