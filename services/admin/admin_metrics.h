#pragma once
// The fleet's figures for /metrics, read from the database at each scrape (so every process shows
// the same, whoever leads): jobs by queue, state, consumption model and reason; nodes by zone,
// machine type, consumption model and state; capacity configured and usable now; persistent
// resources' nodes used and idle; cost and goodput per consumption model. No label names a job.
#include "services/admin/admin_service.h"
#include "services/metrics/exposition.h"
#include "services/status.h"

namespace trainyard {

Status WriteJobFamilies(AdminService& admin, metrics::Exposition& e);
Status WriteFleetFamilies(AdminService& admin, metrics::Exposition& e);
Status WriteCostFamilies(AdminService& admin, metrics::Exposition& e);

}  // namespace trainyard
