#pragma once
// A job's priority as its label gives it (Kueue's WorkloadPriorityClass, through unchanged
// clients): checked when the job is created, ranked by the scheduler.
#include <map>
#include <string>
#include <string_view>

#include "services/status.h"

namespace trainyard {

inline constexpr std::string_view kPriorityLabel = "trainyard-priority";
inline constexpr int kDefaultPriority = 500;

// low/medium/high or a number from 0 to 1000000; kDefaultPriority when the label is absent, an
// error naming the label when it is malformed.
StatusOr<int> ParsePriorityLabel(const std::map<std::string, std::string>& labels);

}  // namespace trainyard
