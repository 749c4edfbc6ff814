#include "services/model/custom_job.h"

#include <algorithm>

namespace trainyard {

// The shared JobState enum has more terminal values than a CustomJob reaches in practice
// (EXPIRED, PARTIALLY_SUCCEEDED); they are terminal all the same, so nothing ever resumes them.
bool IsTerminal(JobState state) {
  return std::find(kTerminalJobStates.begin(), kTerminalJobStates.end(), state) !=
         kTerminalJobStates.end();
}

Duration JobTimeout(const CustomJobSpec& spec) {
  if (spec.scheduling && spec.scheduling->timeout && spec.scheduling->timeout->count() > 0) {
    return *spec.scheduling->timeout;
  }
  return kDefaultJobTimeout;
}

std::optional<std::string> PrimaryImage(const CustomJobSpec& spec) {
  for (const WorkerPoolSpec& wp : spec.worker_pool_specs) {
    if (wp.container_spec) return wp.container_spec->image_uri;
    if (wp.python_package_spec) return wp.python_package_spec->executor_image_uri;
  }
  return std::nullopt;
}

}  // namespace trainyard
