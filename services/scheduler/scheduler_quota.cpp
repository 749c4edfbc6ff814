// What admitted jobs hold: their nodes and shares in the capacity snapshot, the releases backfill
// walks, their queue's list of them.
#include "services/scheduler/scheduler.h"

#include <algorithm>
#include <array>
#include <queue>

#include "services/jobs/catalog.h"
#include "services/scheduler/scheduler_internal.h"
#include "services/scheduler/verdict_text.h"
#include "services/scheduler/workload_key.h"

namespace trainyard {

using namespace scheduler_detail;

void Scheduler::AddUsage(const RunningJob& job, int sign) {
  ++capacity_changes_;
  backfill_.AddRunning(job, sign);
  if (!job.on_resource.empty()) {
    // On a resource's nodes: the resource's own hold already counts the pools and the quota.
    auto& used = resource_used_[job.on_resource];
    for (const PlacedPool& pp : job.placement.pools) used[pp.pool] += sign * pp.units;
    queues_.SetRunning(job, sign);
    return;
  }
  capacity_.AddPlacement(job.placement, sign);
  AddShare(job, sign);
  queues_.SetRunning(job, sign);
}

void Scheduler::AddShare(const RunningJob& job, int sign) {
  ++capacity_changes_;
  if (!job.on_resource.empty()) return;
  capacity_.AddShare(job, sign);
  if (sign < 0 && !job.quota.empty()) queues_.QuotaFreed(job.project_id);
}

std::optional<std::string> Scheduler::QuotaBlock(const std::string& project_id,
                                                 const std::vector<QuotaDemand>& more) const {
  return capacity_.QuotaBlock(project_id, more);
}

}  // namespace trainyard
