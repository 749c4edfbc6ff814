#include "workers/resource_reconciler.h"

#include <algorithm>
#include <map>
#include <optional>

#include "services/jobs/job_record_update.h"
#include "services/jobs/job_state_machine.h"
#include "services/log.h"
#include "services/persistent_resources/reboot_policy.h"
#include "services/persistent_resources/resource_state_machine.h"
#include "services/scheduler/verdict_text.h"

namespace trainyard {

Duration ResourceReconciler::BootTime(const ResourceRecord& record) const {
  Duration boot{};
  for (const ResourcePool& pool : record.resource.resource_pools) {
    boot = std::max(boot, fleet_.BootTime(pool.machine_spec.machine_type));
  }
  return boot;
}

StatusOr<bool> ResourceReconciler::StopJobsAndRemove(const ResourceRecord& record, Timestamp now,
                                                     const std::optional<RpcStatus>& error) {
  TY_ASSIGN_OR_RETURN(std::vector<JobRef> jobs, store_.JobsOn(record));
  for (const JobRef& job : jobs) {
    Status cancelled = cancel_job_(job);
    // A job that ended or is already stopping meanwhile is fine; anything else waits a pass.
    if (!cancelled.ok() && cancelled.code() != Code::kFailedPrecondition &&
        cancelled.code() != Code::kNotFound) {
      LogJson(LogLevel::kWarn, "resource_job_cancel_failed",
              {{"resource", record.resource.name}, {"error", cancelled.message()}});
    }
  }
  return store_.Remove(record, now, error);
}

StatusOr<bool> ResourceReconciler::StartReboot(const ResourceRecord& record, Timestamp now) {
  const Duration boot = BootTime(record);
  const Timestamp ready_at = now + std::chrono::duration_cast<std::chrono::microseconds>(boot);
  // Jobs that restart stop as a gang and start again once the nodes are back: the fleet's repair
  // path, with the reboot as the repair.
  TY_ASSIGN_OR_RETURN(std::vector<JobRecord> jobs, store_.JobsHoldingNodes(record));
  std::vector<StateUpdate> stops;
  for (const JobRecord& job : jobs) {
    auto stop = OnResourceReboot(job, record.resource_id, boot, now, max_job_retries_);
    if (!stop.ok()) continue;  // not admitted any more
    stops.push_back(
        StateUpdate{job.id, job.version, std::move(stop).value(), {}, BasisOf(job), {}});
  }
  return store_.StartReboot(record, ready_at, now, stops);
}

std::optional<std::string> ResourceReconciler::QuotaBlock(const ResourceRecord& record,
                                                          const PersistentResource& resized,
                                                          const Scheduler& core) const {
  // What it holds now (what the scheduler counts) against what it would hold, per quota metric.
  auto before = MakeResourceHolder(record.uid, 0, record.project_id, record.location,
                                   AsHeld(record.resource));
  auto after = MakeResourceHolder(record.uid, 0, record.project_id, record.location, resized);
  if (!before.ok() || !after.ok()) return std::nullopt;  // placed already: it was valid then
  std::map<std::string, int64_t> more;
  for (const QuotaDemand& d : after->quota) {
    more[QuotaMetricFor(d.metric, ConsumptionModel::kOnDemand)] += d.amount;
  }
  for (const QuotaDemand& d : before->quota) {
    more[QuotaMetricFor(d.metric, ConsumptionModel::kOnDemand)] -= d.amount;
  }
  std::vector<QuotaDemand> growth;
  for (const auto& [metric, amount] : more) {
    if (amount > 0) growth.push_back({metric, amount});
  }
  return core.QuotaBlock(record.project_id, growth);
}

StatusOr<bool> ResourceReconciler::ResizeNow(const ResourceRecord& record, Timestamp now,
                                             const Scheduler& core) {
  const PersistentResource& r = record.resource;
  if (!r.trainyard || r.trainyard->pools.size() != r.resource_pools.size()) return false;
  if (std::optional<std::string> block = QuotaBlock(record, r, core)) {
    TY_RETURN_IF_ERROR(store_.ResizeWaits(record, "QUOTA_EXCEEDED", *block));
    return false;
  }
  std::vector<ResourceFleetStore::PoolResize> pools;
  Duration boot{};
  for (size_t i = 0; i < r.resource_pools.size(); ++i) {
    const PlacedPoolStatus& placed = r.trainyard->pools[i];
    const CapacityPool* pool = fleet_.FindPool(placed.pool_id);
    if (pool == nullptr) return false;
    const MachineSpec& spec = r.resource_pools[i].machine_spec;
    pools.push_back(
        {placed.pool_id, r.resource_pools[i].replica_count, pool->hosts_per_unit,
         pool->NodeHourPrice(spec.machine_type, static_cast<int>(spec.accelerator_count)),
         pool->elastic ? pool->ElasticVmPrefix(spec.machine_type, "r" + std::to_string(record.uid))
                       : ""});
    if (r.resource_pools[i].replica_count > placed.units) {
      boot = std::max(boot, fleet_.BootTime(placed.machine_type));
    }
  }
  std::string why;
  return store_.Resize(record, pools,
                       now + std::chrono::duration_cast<std::chrono::microseconds>(boot), now, why);
}

StatusOr<bool> ResourceReconciler::Autoscale(const ResourceRecord& record, Timestamp now,
                                             const Scheduler& core) {
  const Scheduler::Shortfall& demand = core.resource_shortfall();
  const PersistentResource& r = record.resource;
  if (!r.trainyard || r.trainyard->pools.size() != r.resource_pools.size()) return false;
  auto wanted = demand.find(ResourceKey(record.project_id, record.location, record.resource_id));
  std::optional<std::map<std::string, int64_t>> idle;  // read only when a pool could shrink
  PersistentResource resized = r;
  bool changed = false;
  for (size_t i = 0; i < resized.resource_pools.size(); ++i) {
    ResourcePool& pool = resized.resource_pools[i];
    if (!pool.autoscaling_spec) continue;
    const int64_t most = std::max(pool.autoscaling_spec->max_replica_count, pool.replica_count);
    const int64_t least = pool.autoscaling_spec->min_replica_count;
    int64_t grow = 0;
    if (wanted != demand.end()) {
      if (auto d = wanted->second.find(pool.machine_spec.machine_type); d != wanted->second.end()) {
        grow = d->second.needed - d->second.free;
      }
    }
    if (grow > 0 && pool.replica_count < most) {
      // As far as the project's quota lets it, one replica at a time.
      const int64_t from = pool.replica_count;
      for (int64_t to = std::min(most, from + grow); to > from; --to) {
        pool.replica_count = to;
        if (!QuotaBlock(record, resized, core)) break;
        pool.replica_count = from;
      }
      changed = changed || pool.replica_count > from;
      continue;
    }
    if (grow > 0 || pool.replica_count <= least) continue;
    if (!idle) {
      TY_ASSIGN_OR_RETURN(idle, IdleNodes(record, now, core));
    }
    const CapacityPool* fleet_pool = fleet_.FindPool(r.trainyard->pools[i].pool_id);
    auto it = idle->find(r.trainyard->pools[i].pool_id);
    if (fleet_pool == nullptr || it == idle->end()) continue;
    const int64_t idle_units = it->second / fleet_pool->hosts_per_unit;
    const int64_t shrink = std::min(pool.replica_count - least, idle_units);
    if (shrink <= 0) continue;
    pool.replica_count -= shrink;
    it->second -= shrink * fleet_pool->hosts_per_unit;
    changed = true;
  }
  if (!changed) return false;
  LogJson(LogLevel::kInfo, "resource_autoscaled", {{"resource", r.name}});
  return store_.Autoscale(record, resized, now);
}

StatusOr<std::map<std::string, int64_t>> ResourceReconciler::IdleNodes(const ResourceRecord& record,
                                                                       Timestamp now,
                                                                       const Scheduler& core) {
  const Timestamp idle_since =
      now - std::chrono::duration_cast<std::chrono::microseconds>(fleet_.resource_idle_timeout);
  TY_ASSIGN_OR_RETURN(auto idle, store_.IdleNodes(record, idle_since));
  const std::string key = ResourceKey(record.project_id, record.location, record.resource_id);
  std::map<std::string, int64_t> held;  // elastic fleet pool → units the resource holds there
  for (const PlacedPoolStatus& placed : record.resource.trainyard->pools) {
    const CapacityPool* pool = fleet_.FindPool(placed.pool_id);
    if (pool != nullptr && pool->elastic) held[placed.pool_id] += placed.units;
  }
  for (const auto& [pool_id, units] : held) {
    const int64_t free = units - core.ResourceUnitsUsed(key, fleet_.PoolIndex(pool_id));
    const auto since_key = std::make_pair(record.uid, pool_id);
    if (free <= 0) {
      elastic_free_since_.erase(since_key);
      continue;
    }
    // One time a free unit, oldest first; the units taken again are the ones freed last.
    std::vector<Timestamp>& since = elastic_free_since_[since_key];
    since.resize(std::min(since.size(), static_cast<size_t>(free)));
    since.resize(static_cast<size_t>(free), now);
    const auto idle_units =
        std::upper_bound(since.begin(), since.end(), idle_since) - since.begin();
    if (idle_units > 0) idle[pool_id] = idle_units;
  }
  return idle;
}

StatusOr<int> ResourceReconciler::Step(const std::vector<ResourceRecord>& resources, Timestamp now,
                                       const Scheduler& core) {
  // Timers of resources that are gone go with them.
  std::erase_if(elastic_free_since_, [&](const auto& entry) {
    return std::none_of(resources.begin(), resources.end(),
                        [&](const ResourceRecord& r) { return r.uid == entry.first.first; });
  });
  int moved = 0;
  for (const ResourceRecord& rec : resources) {
    const PersistentResource& r = rec.resource;
    const bool placed = r.trainyard && !r.trainyard->zone.empty();
    StatusOr<bool> done = false;
    // The lifecycle's decision is the state machine's; this carries it out.
    const ResourceFacts facts{placed, rec.ready_at.has_value(),
                              rec.ready_at && *rec.ready_at <= now, rec.cancel_requested};
    switch (ResourceStateMachine::NextAction(r.state, facts)) {
      case ResourceAction::kCancelCreation:
        done = StopJobsAndRemove(
            rec, now,
            RpcStatusOf(Code::kCancelled, "the creation of " + r.name + " was cancelled"));
        break;
      case ResourceAction::kMarkRunning:
        done = store_.MarkRunning(rec, now);
        break;
      case ResourceAction::kStartReboot:
        done = StartReboot(rec, now);
        break;
      case ResourceAction::kResize:
        done = ResizeNow(rec, now, core);
        break;
      case ResourceAction::kRemove:
        done = StopJobsAndRemove(rec, now, std::nullopt);
        break;
      case ResourceAction::kAutoscale:
        done = Autoscale(rec, now, core);
        break;
      case ResourceAction::kWait:
        break;
    }
    if (!done.ok()) return done.status();
    if (*done) ++moved;
  }
  return moved;
}

}  // namespace trainyard
