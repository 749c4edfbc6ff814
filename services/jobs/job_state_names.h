#pragma once
// The one spelling of every JobState: the proto's names. The wire's enum table (api/wire/enums),
// the list-filter parser and the domain's messages all read this list.
#include <array>
#include <string_view>

#include "services/model/custom_job.h"

namespace trainyard {

struct JobStateSpelling {
  std::string_view name;  // "JOB_STATE_RUNNING"
  JobState state;
};

// In proto order (by number).
inline constexpr std::array<JobStateSpelling, 12> kJobStateSpellings = {{
    {"JOB_STATE_UNSPECIFIED", JobState::kUnspecified},
    {"JOB_STATE_QUEUED", JobState::kQueued},
    {"JOB_STATE_PENDING", JobState::kPending},
    {"JOB_STATE_RUNNING", JobState::kRunning},
    {"JOB_STATE_SUCCEEDED", JobState::kSucceeded},
    {"JOB_STATE_FAILED", JobState::kFailed},
    {"JOB_STATE_CANCELLING", JobState::kCancelling},
    {"JOB_STATE_CANCELLED", JobState::kCancelled},
    {"JOB_STATE_PAUSED", JobState::kPaused},
    {"JOB_STATE_EXPIRED", JobState::kExpired},
    {"JOB_STATE_UPDATING", JobState::kUpdating},
    {"JOB_STATE_PARTIALLY_SUCCEEDED", JobState::kPartiallySucceeded},
}};

// "JOB_STATE_RUNNING": the proto name, for messages written by the domain.
std::string_view StateNameForMessage(JobState state);

}  // namespace trainyard
