#pragma once
// What a server's /metrics shows besides the API's own request figures: the scheduler's and the
// runtime's loops, the database's pool and group commits, the poll cache, jobs, the fleet, cost
// and utilization.
#include "cmd/app/control_plane.h"
#include "cmd/app/pg_adapters.h"
#include "services/metrics/registry.h"

namespace trainyard::app {

// Adds their collectors to `registry`; `plane` and `adapters` must outlive its scrapes.
void AddServeFamilies(metrics::Registry& registry, ControlPlane& plane, PgAdapters& adapters);

}  // namespace trainyard::app
