#include "cmd/app/pg_adapters.h"

namespace trainyard::app {

PgAdapters::PgAdapters(pg::Pool& pool, std::string conninfo, JobLogRetention log_retention,
                       size_t job_cache_entries)
    : PgAdapters(pool, pool, std::move(conninfo), {}, log_retention, job_cache_entries) {}

PgAdapters::PgAdapters(pg::Pool& pool, pg::Pool& background_pool, std::string conninfo,
                       pg::SessionOptions scheduler_session, JobLogRetention log_retention,
                       size_t job_cache_entries)
    : pool_(pool),
      projects_(pool),
      jobs_(pool),
      leases_(background_pool),
      operations_(pool),
      resources_(pool),
      scheduler_(conninfo, std::move(scheduler_session)),
      failures_(scheduler_),
      resource_fleet_(scheduler_),
      admin_(pool),
      injections_(pool),
      logs_(pool, log_retention),
      tokens_(pool) {
  if (job_cache_entries > 0) {
    job_cache_ = std::make_unique<storage::JobRecordCache>(job_cache_entries);
    job_changes_ = std::make_unique<storage::JobChangeListener>(conninfo, *job_cache_);
    cached_jobs_ = std::make_unique<storage::CachedJobStore>(jobs_, *job_cache_);
    cached_leases_ = std::make_unique<storage::CachedJobStore>(leases_, *job_cache_);
  }
}

ControlPlanePorts PgAdapters::ports() {
  ControlPlanePorts p;
  p.projects = &projects_;
  p.jobs = cached_jobs_ ? static_cast<JobRepository*>(cached_jobs_.get()) : &jobs_;
  p.job_leases = &leases_;
  p.runtime_jobs = cached_leases_ ? static_cast<JobRepository*>(cached_leases_.get()) : &leases_;
  p.operations = &operations_;
  p.resources = &resources_;
  p.scheduler = &scheduler_;
  p.failures = &failures_;
  p.resource_fleet = &resource_fleet_;
  p.admin = &admin_;
  p.injections = &injections_;
  p.logs = &logs_;
  p.tokens = &tokens_;
  return p;
}

}  // namespace trainyard::app
