#include "cmd/app/control_plane.h"

namespace trainyard::app {
namespace {

JobExecutorOptions WithLogs(JobExecutorOptions options, JobLogRepository* logs) {
  if (options.logs == nullptr) options.logs = logs;
  return options;
}

}  // namespace

StatusOr<std::unique_ptr<ControlPlane>> ControlPlane::Build(const ControlPlanePorts& ports,
                                                            Fleet& fleet, const Clock& clock,
                                                            Runtime& runtime,
                                                            ControlPlaneOptions options) {
  // The fleet's epoch is fixed before anything reads the fleet (the admin view, the scheduler).
  TY_ASSIGN_OR_RETURN(Timestamp epoch, ports.scheduler->SyncNodes(fleet, clock.Now()));
  fleet.SetEpoch(epoch);
  return std::unique_ptr<ControlPlane>(
      new ControlPlane(ports, fleet, clock, runtime, std::move(options)));
}

ControlPlane::ControlPlane(const ControlPlanePorts& ports, const Fleet& fleet, const Clock& clock,
                           Runtime& runtime, ControlPlaneOptions options)
    : ports_(ports),
      runtime_(runtime),
      jobs_(*ports.projects, *ports.jobs, clock, ports.resources, options.ids),
      operations_(*ports.projects, *ports.operations, clock, options.operation_waiters),
      resources_(*ports.projects, *ports.resources, clock, options.ids),
      admin_(*ports.admin, *ports.projects, fleet, clock),
      utilization_(*ports.projects, *ports.jobs, *ports.admin, fleet, clock),
      injector_(fleet, *ports.injections, clock),
      logs_(*ports.logs, *ports.projects, clock),
      tokens_(*ports.tokens, *ports.projects, wall_clock_),
      scheduler_(*ports.scheduler, fleet, clock, options.scheduler),
      failures_(*ports.failures, fleet, options.scheduler.simulated_startup),
      reconciler_(*ports.resource_fleet, fleet,
                  [this](const JobRef& job) { return jobs_.Cancel(job); }),
      executor_(*ports.job_leases, ports.runtime_jobs ? *ports.runtime_jobs : *ports.jobs, runtime,
                clock, WithLogs(options.executor, ports.logs)) {
  scheduler_.SetFailureSimulator(&failures_);
  scheduler_.SetResourceReconciler(&reconciler_);
  // A job created here is admitted in the next pass, not a tick later (a no-op where this process
  // runs no scheduler: the leader elsewhere finds it by its tick).
  jobs_.OnCreated([this] { scheduler_.Wake(); });
  if (options.external_capacity != nullptr) {
    scheduler_.SetExternalCapacity(options.external_capacity);
  }
}

ControlPlane::~ControlPlane() { Stop(); }

void ControlPlane::Start(bool scheduler, bool executor) {
  if (scheduler) scheduler_.Start();
  if (executor) executor_.Start();
}

void ControlPlane::Stop() {
  if (stopped_) return;
  stopped_ = true;
  scheduler_.Stop();
  executor_.Stop();
  runtime_.Shutdown(executor_.released());
}

}  // namespace trainyard::app
