#pragma once
// The control plane's ports on PostgreSQL: one store per port over one pool, and the scheduler's
// store on a connection of its own (it holds the leader lock, and the failure simulator and the
// persistent resources' reconciler commit through it).
#include <memory>
#include <string>

#include "cmd/app/control_plane_ports.h"
#include "services/logs/job_log_repository.h"
#include "storage/pg.h"
#include "storage/pg_admin_store.h"
#include "storage/pg_failure_store.h"
#include "storage/pg_fault_injection_store.h"
#include "storage/pg_job_log_store.h"
#include "storage/pg_job_store.h"
#include "storage/pg_operation_store.h"
#include "storage/pg_project_repository.h"
#include "storage/pg_resource_fleet_store.h"
#include "storage/pg_resource_store.h"
#include "storage/pg_scheduler_store.h"
#include "storage/pg_token_store.h"

namespace trainyard::app {

class PgAdapters {
 public:
  // `conninfo`: the scheduler store's own connection to the pool's database.
  PgAdapters(pg::Pool& pool, std::string conninfo, JobLogRetention log_retention);

  ControlPlanePorts ports();
  pg::Pool& pool() { return pool_; }
  storage::PgProjectRepository& projects() { return projects_; }
  storage::PgJobStore& jobs() { return jobs_; }
  storage::PgOperationStore& operations() { return operations_; }
  storage::PgResourceStore& resources() { return resources_; }
  storage::PgSchedulerStore& scheduler() { return scheduler_; }
  storage::PgFailureStore& failures() { return failures_; }
  storage::PgResourceFleetStore& resource_fleet() { return resource_fleet_; }
  storage::PgAdminStore& admin() { return admin_; }
  storage::PgFaultInjectionStore& injections() { return injections_; }
  storage::PgJobLogStore& logs() { return logs_; }
  storage::PgTokenStore& tokens() { return tokens_; }

 private:
  pg::Pool& pool_;
  storage::PgProjectRepository projects_;
  storage::PgJobStore jobs_;
  storage::PgOperationStore operations_;
  storage::PgResourceStore resources_;
  storage::PgSchedulerStore scheduler_;
  storage::PgFailureStore failures_;
  storage::PgResourceFleetStore resource_fleet_;
  storage::PgAdminStore admin_;
  storage::PgFaultInjectionStore injections_;
  storage::PgJobLogStore logs_;
  storage::PgTokenStore tokens_;
};

}  // namespace trainyard::app
