#pragma once
// The control plane's ports on PostgreSQL: one store per port over one pool, and the scheduler's
// store on a connection of its own (it holds the leader lock, and the failure simulator and the
// persistent resources' reconciler commit through it).
#include <memory>
#include <string>

#include "cmd/app/control_plane_ports.h"
#include "services/logs/job_log_repository.h"
#include "storage/cached_job_store.h"
#include "storage/job_change_listener.h"
#include "storage/job_record_cache.h"
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
  // `conninfo`: the scheduler store's and the job change feed's own connections to the pool's
  // database. `job_cache_entries`: how many polled jobs the API keeps in memory (0: none, every
  // poll reads the database).
  PgAdapters(pg::Pool& pool, std::string conninfo, JobLogRetention log_retention,
             size_t job_cache_entries = 0);
  // As above, with the background roles on sessions of their own: the runtime's leases on
  // `background_pool` (its checkouts never wait behind requests'), and the scheduler's session
  // set up with `scheduler_session` (storage/backend_priority.h).
  PgAdapters(pg::Pool& pool, pg::Pool& background_pool, std::string conninfo,
             pg::SessionOptions scheduler_session, JobLogRetention log_retention,
             size_t job_cache_entries = 0);

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
  // Null when polls are not cached.
  storage::JobRecordCache* job_cache() { return job_cache_.get(); }
  // Stops hearing job changes (polls then read the database): before the database stops, so its
  // closing is not taken for a lost feed.
  void StopChangeFeed() { job_changes_.reset(); }

 private:
  pg::Pool& pool_;
  storage::PgProjectRepository projects_;
  storage::PgJobStore jobs_;
  storage::PgJobStore leases_;  // the runtime's, on the background pool when there is one
  storage::PgOperationStore operations_;
  storage::PgResourceStore resources_;
  storage::PgSchedulerStore scheduler_;
  storage::PgFailureStore failures_;
  storage::PgResourceFleetStore resource_fleet_;
  storage::PgAdminStore admin_;
  storage::PgFaultInjectionStore injections_;
  storage::PgJobLogStore logs_;
  storage::PgTokenStore tokens_;
  std::unique_ptr<storage::JobRecordCache> job_cache_;
  std::unique_ptr<storage::JobChangeListener> job_changes_;
  std::unique_ptr<storage::CachedJobStore> cached_jobs_;
  std::unique_ptr<storage::CachedJobStore> cached_leases_;  // the runtime's writes, same cache
};

}  // namespace trainyard::app
