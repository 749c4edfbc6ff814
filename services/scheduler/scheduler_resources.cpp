// Capacity the scheduler is told of: units down, and what persistent resources hold, which
// only their own jobs take (the flavor assigner fits every other job).
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

void Scheduler::SetUnitsDown(int pool, int64_t units) {
  if (capacity_.SetUnitsDown(pool, units)) quiet_.reset();
}

void Scheduler::SetResourceCapacity(const std::string& key, int64_t uid, const Placement& held,
                                    bool ready) {
  HeldCapacity capacity;
  capacity.uid = uid;
  capacity.ready = ready;
  capacity.zone = held.zone;
  for (const PlacedPool& pp : held.pools) {
    HeldPool& pool = capacity.pools[pp.pool];
    pool.units += pp.units;
    pool.machine_type = pp.machine_type;
  }
  resources_[key] = std::move(capacity);
  quiet_.reset();
}

void Scheduler::RemoveResourceCapacity(const std::string& key) {
  if (resources_.erase(key) > 0) quiet_.reset();
}

void Scheduler::SetResourceUnitsDown(const std::string& key, const std::map<int, int64_t>& down) {
  auto it = resources_.find(key);
  if (it == resources_.end()) return;
  for (auto& [pool, held] : it->second.pools) {
    auto d = down.find(pool);
    const int64_t now_down = d == down.end() ? 0 : d->second;
    if (held.down != now_down) quiet_.reset();
    held.down = now_down;
  }
}

int64_t Scheduler::FreeUnits(int pool, Timestamp now) const {
  return capacity_.Available(pool, now);
}

int64_t Scheduler::ResourceUnitsUsed(const std::string& key, int pool) const {
  auto on = resource_used_.find(key);
  if (on == resource_used_.end()) return 0;
  auto used = on->second.find(pool);
  return used == on->second.end() ? 0 : used->second;
}

FitResult Scheduler::FitOnResource(const SchedulerJob& job) const {
  FitResult out;
  const std::string name = job.on_resource.substr(job.on_resource.rfind('/') + 1);
  auto it = resources_.find(job.on_resource);
  if (it == resources_.end() || !it->second.ready) {
    out.reason = fit_reason::ResourceNotReady{name};
    return out;
  }
  const HeldCapacity& held = it->second;
  const std::unordered_map<int, int64_t>* used = nullptr;
  if (auto u = resource_used_.find(job.on_resource); u != resource_used_.end()) used = &u->second;
  auto used_in = [&](int pool) -> int64_t {
    if (used == nullptr) return 0;
    auto u = used->find(pool);
    return u == used->end() ? 0 : u->second;
  };
  Placement placement;
  placement.zone = held.zone;
  for (const GangPool& gp : job.pools) {
    int64_t largest = 0, best_free = 0;
    bool placed = false;
    for (const auto& [pool, hp] : held.pools) {
      if (hp.machine_type != gp.machine_type) continue;
      largest = std::max(largest, hp.units);
      const int64_t free = hp.units - hp.down - used_in(pool) - TakenIn(placement, pool);
      if (free >= gp.units) {
        placement.pools.push_back({pool, gp.units, gp.machine_type, gp.attached_count});
        placed = true;
        break;
      }
      best_free = std::max(best_free, free);
    }
    if (placed) continue;
    // Every waiting job's units count, the free ones once: what would let them all start.
    ResourceDemand& demand = resource_shortfall_[job.on_resource][gp.machine_type];
    demand.needed += gp.units;
    demand.free = std::max(demand.free, best_free);
    // Never NEVER_FITS: the create checked the job against the pool's most replicas, and a
    // resource that holds fewer now may grow (a resize, autoscaling) without a fleet change.
    out.reason = fit_reason::ResourceBusy{name, gp.machine_type, gp.units, best_free, largest};
    return out;
  }
  out.placement = std::move(placement);
  return out;
}

}  // namespace trainyard
