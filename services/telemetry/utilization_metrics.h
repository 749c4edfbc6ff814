#pragma once
// Every running job's hosts for /metrics, one series per host and figure. Labels: the host, its
// zone, machine type and accelerator, and `gang`, the first host of the job, which all hosts of a
// job share: a job's hosts can be compared (and the slow one found) without a job id as a label,
// and the label set is bounded by the fleet's size, not by the number of jobs.
#include "services/metrics/exposition.h"
#include "services/status.h"
#include "services/telemetry/utilization_service.h"

namespace trainyard {

Status WriteUtilizationFamilies(UtilizationService& utilization, metrics::Exposition& e);

}  // namespace trainyard
