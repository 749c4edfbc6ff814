#include "services/model/custom_job.h"

namespace trainyard {

// The shared JobState enum has more terminal values than a CustomJob reaches in practice
// (EXPIRED, PARTIALLY_SUCCEEDED); they are terminal all the same, so nothing ever resumes them.
bool IsTerminal(JobState state) {
  switch (state) {
    case JobState::kSucceeded:
    case JobState::kFailed:
    case JobState::kCancelled:
    case JobState::kExpired:
    case JobState::kPartiallySucceeded:
      return true;
    default:
      return false;
  }
}

}  // namespace trainyard
