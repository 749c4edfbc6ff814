#pragma once
// Carries out what clients asked of persistent resources, in the scheduler leader's pass (the
// scheduler itself places their holds): a placed resource becomes RUNNING once its nodes have
// booted, a reboot boots them again, a delete cancels the jobs on it and gives its nodes back. A
// process killed mid-way leaves the state in the database; the next leader carries on from it.
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "services/fleet/fleet.h"
#include "services/persistent_resources/resource_fleet_store.h"
#include "services/runtime/job_supervisor.h"
#include "services/scheduler/scheduler.h"

namespace trainyard {

class ResourceReconciler {
 public:
  // `cancel_job` asks a job to stop (JobService::Cancel).
  using CancelJob = std::function<Status(const JobRef&)>;
  ResourceReconciler(ResourceFleetStore& store, const Fleet& fleet, CancelJob cancel_job)
      : store_(store), fleet_(fleet), cancel_job_(std::move(cancel_job)) {}

  // One pass over every resource; how many it moved on. `demand` is what jobs waiting for each
  // resource lacked in the scheduler's last cycle: autoscaled pools grow by it, toward their max,
  // and give back nodes idle longer than the fleet's resourceIdleTimeout, down to their min.
  // `core` (the leader's scheduler, as of its last cycle) also says what quota the project has
  // left: no resize or autoscaling takes nodes beyond it.
  StatusOr<int> Step(const std::vector<ResourceRecord>& resources, Timestamp now,
                     const Scheduler& core);

 private:
  Duration BootTime(const ResourceRecord& record) const;
  // A reboot: the jobs on the resource stop until the nodes are back, or fail (reboot_policy.h).
  StatusOr<bool> StartReboot(const ResourceRecord& record, Timestamp now);
  // A patched replicaCount: grows or shrinks the pools in place (same fleet pools).
  StatusOr<bool> ResizeNow(const ResourceRecord& record, Timestamp now, const Scheduler& core);
  StatusOr<bool> Autoscale(const ResourceRecord& record, Timestamp now, const Scheduler& core);
  // Per fleet pool, the nodes of `record` idle longer than the fleet's resourceIdleTimeout: from
  // the store's node rows, and for elastic pools (no rows) the units its jobs leave free, timed
  // from when this reconciler first saw them free.
  StatusOr<std::map<std::string, int64_t>> IdleNodes(const ResourceRecord& record, Timestamp now,
                                                     const Scheduler& core);
  // The QUOTA_EXCEEDED message when `resized` would take more than the project may hold.
  std::optional<std::string> QuotaBlock(const ResourceRecord& record,
                                        const PersistentResource& resized,
                                        const Scheduler& core) const;
  StatusOr<bool> StopJobsAndRemove(const ResourceRecord& record, Timestamp now,
                                   const std::optional<RpcStatus>& error);

  ResourceFleetStore& store_;
  const Fleet& fleet_;
  CancelJob cancel_job_;
  // (resource uid, elastic fleet pool) → since when each unit its jobs leave free has been free,
  // as this reconciler saw it: elastic VMs have no node rows to say. A new leader starts again.
  std::map<std::pair<int64_t, std::string>, std::vector<Timestamp>> elastic_free_since_;
  // A reboot retries a restartJobOnWorkerRestart job as a replica failure would.
  const int max_job_retries_ = SupervisorPolicy{}.max_job_retries;
};

}  // namespace trainyard
