#pragma once
// JSON of a job's accelerator utilization (GET …/customJobs/{id}/utilization): camelCase like the
// rest of the admin view, fractions in [0, 1], bytes and bytes per second as whole numbers.
#include <nlohmann/json.hpp>

#include "services/telemetry/utilization_service.h"

namespace trainyard {

nlohmann::json EncodeJobUtilization(const JobUtilization& u);

}  // namespace trainyard
