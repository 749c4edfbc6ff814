#pragma once
// The queues' depth for /metrics, read from the database at scrape time: unfinished jobs per
// project, location and state (the same counts as GET /trainyard/v1/queues).
#include "services/admin/admin_service.h"
#include "services/metrics/exposition.h"

namespace trainyard {

Status WriteQueueDepth(AdminService& admin, metrics::Exposition& e);

}  // namespace trainyard
