#pragma once
// The control plane's ports in memory (storage/memory/): jobs, nodes, the scheduler's feed and
// commit, the failure simulator's store, persistent resources and operations, projects; the API's
// own (the admin view, tokens, fault injections) answer that they are not kept. What `simulate`
// builds the control plane on.
#include "cmd/app/control_plane_ports.h"
#include "storage/memory/memory_database.h"
#include "storage/memory/memory_failure_store.h"
#include "storage/memory/memory_job_store.h"
#include "storage/memory/memory_resource_store.h"
#include "storage/memory/memory_scheduler_store.h"
#include "storage/memory/unkept_ports.h"

namespace trainyard::app {

class MemoryAdapters {
 public:
  MemoryAdapters()
      : projects_(db_),
        jobs_(db_),
        scheduler_(db_),
        failures_(db_),
        resources_(db_),
        operations_(db_) {}
  MemoryAdapters(const MemoryAdapters&) = delete;
  MemoryAdapters& operator=(const MemoryAdapters&) = delete;

  ControlPlanePorts ports() {
    ControlPlanePorts p;
    p.projects = &projects_;
    p.jobs = &jobs_;
    p.job_leases = &jobs_;
    p.operations = &operations_;
    p.resources = &resources_;
    p.scheduler = &scheduler_;
    p.failures = &failures_;
    p.resource_fleet = &resources_;
    p.admin = &admin_;
    p.injections = &injections_;
    p.logs = &logs_;
    p.tokens = &tokens_;
    return p;
  }
  storage::memory::MemoryDatabase& db() { return db_; }
  storage::memory::MemoryJobStore& jobs() { return jobs_; }

 private:
  storage::memory::MemoryDatabase db_;
  storage::memory::MemoryProjectRepository projects_;
  storage::memory::MemoryJobStore jobs_;
  storage::memory::MemorySchedulerStore scheduler_;
  storage::memory::MemoryFailureStore failures_;
  storage::memory::MemoryResourceStore resources_;
  storage::memory::MemoryOperationStore operations_;
  storage::memory::NoAdminView admin_;
  storage::memory::NoInjections injections_;
  storage::memory::NoTokens tokens_;
  storage::memory::DroppedLogs logs_;
};

}  // namespace trainyard::app
