#pragma once
// The composition root: builds the whole control plane (the API's services, the scheduler's
// leader loop with the failure simulator and the persistent resources' reconciler, the runtime's
// executor) from its ports, a fleet, a clock and a runtime. `serve`, the integration tests'
// fixture and anything else that runs the control plane build it here, so there is one wiring.
#include <memory>

#include "cmd/app/control_plane_ports.h"
#include "services/admin/admin_service.h"
#include "services/auth/token_service.h"
#include "services/clock.h"
#include "services/fleet/external_capacity.h"
#include "services/fleet/fault_injection.h"
#include "services/jobs/job_service.h"
#include "services/logs/job_log_service.h"
#include "services/operations/operation_service.h"
#include "services/persistent_resources/resource_service.h"
#include "services/telemetry/utilization_service.h"
#include "workers/failure_simulator.h"
#include "workers/job_executor.h"
#include "workers/resource_reconciler.h"
#include "workers/scheduler_loop.h"

namespace trainyard::app {

struct ControlPlaneOptions {
  // How many :wait calls may hold a request thread at once (OperationService).
  int operation_waiters = 8;
  SchedulerLoopOptions scheduler;
  JobExecutorOptions executor;  // its `logs` is the ports' unless set
  // A real cluster's word on its nodes (the Slurm runtime); it must outlive the control plane.
  const ExternalCapacity* external_capacity = nullptr;
  // Where new job and operation ids come from (none: random); it must outlive the control plane.
  IdSource* ids = nullptr;
};

class ControlPlane {
 public:
  // Fixes the fleet's epoch first (the node slots are synced, and the epoch stored at the first
  // start is kept), then builds everything over `ports`, which must outlive it, as must `fleet`,
  // `clock` and `runtime`. Nothing runs until Start.
  static StatusOr<std::unique_ptr<ControlPlane>> Build(const ControlPlanePorts& ports, Fleet& fleet,
                                                       const Clock& clock, Runtime& runtime,
                                                       ControlPlaneOptions options);
  ~ControlPlane();
  ControlPlane(const ControlPlane&) = delete;
  ControlPlane& operator=(const ControlPlane&) = delete;

  // Starts the background loops of the roles this process runs.
  void Start(bool scheduler, bool executor);
  // Stops the loops, gives the executor's leases back and lets the runtime end the replicas of
  // the jobs it gave back (a killed server leaves them for the next to adopt).
  void Stop();

  JobService& jobs() { return jobs_; }
  OperationService& operations() { return operations_; }
  ResourceService& resources() { return resources_; }
  AdminService& admin() { return admin_; }
  UtilizationService& utilization() { return utilization_; }
  FaultInjector& injector() { return injector_; }
  JobLogService& logs() { return logs_; }
  TokenService& tokens() { return tokens_; }
  SchedulerLoop& scheduler() { return scheduler_; }
  FailureSimulator& failures() { return failures_; }
  ResourceReconciler& reconciler() { return reconciler_; }
  JobExecutor& executor() { return executor_; }
  Runtime& runtime() { return runtime_; }

 private:
  ControlPlane(const ControlPlanePorts& ports, const Fleet& fleet, const Clock& clock,
               Runtime& runtime, ControlPlaneOptions options);

  ControlPlanePorts ports_;
  Runtime& runtime_;
  SystemClock wall_clock_;  // tokens expire in real time, whatever the simulator's speed
  JobService jobs_;
  OperationService operations_;
  ResourceService resources_;
  AdminService admin_;
  UtilizationService utilization_;
  FaultInjector injector_;
  JobLogService logs_;
  TokenService tokens_;
  SchedulerLoop scheduler_;
  FailureSimulator failures_;
  ResourceReconciler reconciler_;
  JobExecutor executor_;
  bool stopped_ = false;
};

}  // namespace trainyard::app
