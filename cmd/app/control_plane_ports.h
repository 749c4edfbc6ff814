#pragma once
// Every port the control plane reads and writes through. One kind of adapter fills them all:
// PostgreSQL for `serve` and the integration tests (cmd/app/pg_adapters.h), memory for what runs
// without a database.
#include "services/admin/admin_repository.h"
#include "services/auth/token_repository.h"
#include "services/fleet/failure_store.h"
#include "services/fleet/fault_injection.h"
#include "services/jobs/job_repository.h"
#include "services/logs/job_log_repository.h"
#include "services/operations/operation_repository.h"
#include "services/persistent_resources/resource_fleet_store.h"
#include "services/persistent_resources/resource_repository.h"
#include "services/scheduler/scheduler_store.h"

namespace trainyard::app {

struct ControlPlanePorts {
  ProjectRepository* projects = nullptr;
  JobRepository* jobs = nullptr;
  JobLeaseRepository* job_leases = nullptr;
  // The runtime's writes to the jobs it holds (none: `jobs`); on PostgreSQL the runtime's own
  // sessions, dropping what they change from the same poll cache.
  JobRepository* runtime_jobs = nullptr;
  OperationRepository* operations = nullptr;
  ResourceRepository* resources = nullptr;
  SchedulerStore* scheduler = nullptr;
  FailureStore* failures = nullptr;
  ResourceFleetStore* resource_fleet = nullptr;
  AdminRepository* admin = nullptr;
  FaultInjectionRepository* injections = nullptr;
  JobLogRepository* logs = nullptr;
  TokenRepository* tokens = nullptr;
};

}  // namespace trainyard::app
