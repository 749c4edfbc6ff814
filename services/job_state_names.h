#pragma once
#include <string_view>

#include "services/model/custom_job.h"

namespace trainyard {

// "JOB_STATE_RUNNING": the proto name, for messages written by the domain.
std::string_view StateNameForMessage(JobState state);

}  // namespace trainyard
