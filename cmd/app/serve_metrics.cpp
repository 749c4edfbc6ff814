#include "cmd/app/serve_metrics.h"

#include "services/admin/admin_metrics.h"
#include "services/telemetry/utilization_metrics.h"
#include "storage/storage_metrics.h"

namespace trainyard::app {

void AddServeFamilies(metrics::Registry& registry, ControlPlane& plane, PgAdapters& adapters) {
  registry.Add([&plane](metrics::Exposition& e) {
    plane.scheduler().metrics().Write(e);
    plane.executor().metrics().Write(e);
    return Status::Ok();
  });
  registry.Add([&adapters](metrics::Exposition& e) {
    storage::WriteDatabaseFamilies(adapters.pool(), adapters.jobs().creates(), e);
    storage::WriteJobCacheFamilies(adapters.job_cache(), e);
    return Status::Ok();
  });
  registry.Add([&plane](metrics::Exposition& e) { return WriteJobFamilies(plane.admin(), e); });
  registry.Add([&plane](metrics::Exposition& e) { return WriteFleetFamilies(plane.admin(), e); });
  registry.Add([&plane](metrics::Exposition& e) { return WriteCostFamilies(plane.admin(), e); });
  registry.Add([&plane](metrics::Exposition& e) {
    return WriteUtilizationFamilies(plane.utilization(), e);
  });
}

}  // namespace trainyard::app
