#include "cmd/app/pg_adapters.h"

namespace trainyard::app {

PgAdapters::PgAdapters(pg::Pool& pool, std::string conninfo, JobLogRetention log_retention)
    : pool_(pool),
      projects_(pool),
      jobs_(pool),
      operations_(pool),
      resources_(pool),
      scheduler_(std::move(conninfo)),
      failures_(scheduler_),
      resource_fleet_(scheduler_),
      admin_(pool),
      injections_(pool),
      logs_(pool, log_retention),
      tokens_(pool) {}

ControlPlanePorts PgAdapters::ports() {
  ControlPlanePorts p;
  p.projects = &projects_;
  p.jobs = &jobs_;
  p.job_leases = &jobs_;
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
