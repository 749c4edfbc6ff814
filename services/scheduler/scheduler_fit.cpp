// Fitting a gang onto pools: flavor order, pool matching, units available and down, and the
// capacity persistent resources hold.
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

const std::vector<int>& Scheduler::PoolsFor(int zone, const GangPool& gp) const {
  return gp.type_id < 0 ? elastic_pools_of_zone_[zone] : typed_pools_of_zone_[zone][gp.type_id];
}

int Scheduler::TypeIdOf(const GangPool& gp) const {
  auto it = type_ids_.find(gp.attached == AcceleratorType::kUnspecified
                               ? gp.machine_type
                               : AttachedPoolType(gp.machine_type, gp.attached));
  return it == type_ids_.end() ? -1 : it->second;
}

void Scheduler::SetUnitsDown(int pool, int64_t units) {
  if (pool >= 0 && pool < static_cast<int>(down_.size())) down_[pool] = units;
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
}

void Scheduler::RemoveResourceCapacity(const std::string& key) { resources_.erase(key); }

void Scheduler::SetResourceUnitsDown(const std::string& key, const std::map<int, int64_t>& down) {
  auto it = resources_.find(key);
  if (it == resources_.end()) return;
  for (auto& [pool, held] : it->second.pools) {
    auto d = down.find(pool);
    held.down = d == down.end() ? 0 : d->second;
  }
}

int64_t Scheduler::Available(int pool, Timestamp now) const {
  const CapacityPool& p = fleet_.pools[pool];
  if (p.elastic) return kElasticUnits;
  return std::max<int64_t>(0, p.UnitsAvailableAt(now, fleet_.epoch) - used_[pool] - down_[pool]);
}

int64_t Scheduler::FreeUnits(int pool, Timestamp now) const { return Available(pool, now); }

std::vector<ConsumptionModel> Scheduler::FlavorOrder(const SchedulerJob& job) const {
  switch (job.strategy) {
    case SchedulingStrategy::kSpot:
      return {CM::kSpot};
    case SchedulingStrategy::kLowCost:
      return {CM::kSpot, CM::kOnDemand};
    case SchedulingStrategy::kFlexStart:
      return {CM::kFlexStart};
    default:
      if (job.affinity == ReservationAffinityType::kNoReservation) return {CM::kOnDemand};
      if (job.affinity == ReservationAffinityType::kSpecificReservation) return {CM::kReservation};
      return {CM::kReservation, CM::kOnDemand};
  }
}

bool Scheduler::PoolMatches(int p, const SchedulerJob& job, const GangPool& gp,
                            ConsumptionModel model) const {
  const CapacityPool& pool = fleet_.pools[p];
  if (pool.attached != AcceleratorType::kUnspecified ||
      gp.attached != AcceleratorType::kUnspecified) {
    // N1 with attached GPUs runs only on a pool of that GPU, whatever its N1 shape; cloud-tpu
    // only on hosts of its generation, in slices of its size.
    return pool.model == model && pool.attached == gp.attached &&
           pool.machine_type == AttachedPoolType(gp.machine_type, gp.attached) &&
           pool.tpu_chips == gp.tpu_chips;
  }
  if (pool.elastic) {
    // Only for a CPU-only type the zone has no explicit (bounded) pool of: the zone's pools for
    // the type are its elastic ones alone.
    return pool.model == model && gp.cpu_only &&
           PoolsFor(zone_of_pool_[p], gp).size() == elastic_pools_of_zone_[zone_of_pool_[p]].size();
  }
  if (pool.model != model || pool.machine_type != gp.machine_type ||
      pool.tpu_chips != gp.tpu_chips) {
    return false;
  }
  if (pool.cohort >= 0) {
    // A cohort's pool serves its members, whatever the reservation's own project list says.
    auto member = cohort_of_project_.find(job.project_id);
    if (member == cohort_of_project_.end() || member->second != pool.cohort) return false;
  } else if (model == CM::kReservation && !pool.UsableBy(job.project_id)) {
    return false;
  }
  if (model != CM::kReservation) return true;
  if (job.affinity != ReservationAffinityType::kSpecificReservation) return true;
  return std::find(job.reservations.begin(), job.reservations.end(), pool.reservation) !=
         job.reservations.end();
}

Scheduler::FitOutcome Scheduler::Fit(const SchedulerJob& job, Cycle& cycle, const Extra* extra,
                                     int only_zone, bool use_holds,
                                     const std::vector<ConsumptionModel>& models,
                                     bool explain) const {
  FitOutcome out;
  auto region = region_index_.find(job.region);
  if (region == region_index_.end() || job.pools.empty()) {
    out.code = ReasonCode::kNeverFits;
    out.message = NoRegionMessage(job.region);
    return out;
  }
  const Timestamp job_end = cycle.now + duration_cast<microseconds>(job.expected_runtime);
  // Units of `pool` this job may take now: free, plus planned releases, minus what holds keep
  // for earlier starving jobs (unless this job ends before they start).
  auto physical = [&](int pool, const Placement& taken) {
    return Available(pool, cycle.now) + ExtraFor(extra, pool) - TakenIn(taken, pool);
  };
  // A cohort's pool: no more than the project's share allows, less what this placement already
  // takes of the same resource.
  auto within_share = [&](int pool, const Placement& taken, int64_t a) {
    if (fleet_.pools[pool].cohort < 0) return a;
    int64_t same = 0;
    for (const PlacedPool& pp : taken.pools) {
      if (resource_of_pool_[pp.pool] == resource_of_pool_[pool] &&
          fleet_.pools[pp.pool].cohort == fleet_.pools[pool].cohort) {
        same += pp.units;
      }
    }
    return std::min(a, Headroom(job.project_id, pool, extra) - same);
  };
  auto usable = [&](int pool, const Placement& taken, const Hold** held, bool holds = true) {
    int64_t a = within_share(pool, taken, physical(pool, taken));
    if (!use_holds || !holds) return a;
    for (const Hold& h : cycle.holds) {
      if (h.job_id == job.id || job_end <= h.start) continue;
      const int64_t* s = h.SlackOf(pool);
      if (s == nullptr) continue;
      int64_t limited = *s - TakenIn(taken, pool);
      if (limited < a) {
        if (held != nullptr) *held = &h;
        a = limited;
      }
    }
    return a;
  };

  // Zones where the first worker pool fits its most preferred flavor come first (reservations
  // before on-demand, whichever zone they are in), then the most free.
  struct ZoneRank {
    size_t flavor;
    int64_t neg_free;
    int zone;
    bool operator<(const ZoneRank& o) const {
      return std::tie(flavor, neg_free, zone) < std::tie(o.flavor, o.neg_free, o.zone);
    }
  };
  std::vector<ZoneRank> zones;
  for (int z : zones_of_region_[region->second]) {
    if (only_zone >= 0 && z != only_zone) continue;
    ZoneRank rank{models.size(), 0, z};
    for (int p : PoolsFor(z, job.pools[0])) {
      for (size_t m = 0; m < models.size(); ++m) {
        if (!PoolMatches(p, job, job.pools[0], models[m])) continue;
        int64_t free = usable(p, Placement{}, nullptr);
        rank.neg_free -= free;
        if (free >= job.pools[0].units) rank.flavor = std::min(rank.flavor, m);
      }
    }
    zones.push_back(rank);
  }
  std::sort(zones.begin(), zones.end());

  const Hold* held_by = nullptr;
  for (const ZoneRank& zone_rank : zones) {
    const int z = zone_rank.zone;
    Placement placement;
    placement.zone = zone_names_[z];
    bool ok = true;
    for (const GangPool& gp : job.pools) {
      bool placed = false;
      for (ConsumptionModel m : models) {
        for (int p : PoolsFor(z, gp)) {
          if (!PoolMatches(p, job, gp, m)) continue;
          const Hold* held = nullptr;
          int64_t a = usable(p, placement, &held);
          if (a >= gp.units) {
            placement.pools.push_back({p, gp.units, gp.machine_type, gp.attached_count});
            placed = true;
            break;
          }
          if (held != nullptr && usable(p, placement, nullptr, false) >= gp.units) {
            held_by = held;
          }
        }
        if (placed) break;
      }
      if (!placed) {
        ok = false;
        break;
      }
    }
    if (ok) {
      out.fits = true;
      out.placement = std::move(placement);
      return out;
    }
  }

  if (!explain) return out;  // planning tries many fits and needs only the ones that fit
  if (held_by != nullptr) {
    out.code = ReasonCode::kHeldForReservation;
    out.held_by = held_by;
    out.message = HeldMessage(held_by->job_id, held_by->priority, held_by->start);
    return out;
  }
  // Why not: the gang's pools one at a time, most severe first.
  for (const GangPool& gp : job.pools) {
    int64_t largest_pool = 0;
    int64_t best_free = 0;
    int64_t free_sum = 0;
    std::string best_zone;
    int share_bound = -1;  // a cohort pool with room for the pool but not within the share
    int cohort_full = -1;  // a cohort pool of the job's cohort without room
    std::vector<ShortPool> short_now;  // pools offering less than they have: stockouts, spot
    for (int z : zones_of_region_[region->second]) {
      int64_t zone_best = 0;
      for (int p : PoolsFor(z, gp)) {
        for (ConsumptionModel m : models) {
          if (!PoolMatches(p, job, gp, m)) continue;
          largest_pool = std::max<int64_t>(
              largest_pool, fleet_.pools[p].elastic ? kElasticUnits : fleet_.pools[p].units);
          const int64_t can = usable(p, Placement{}, nullptr);
          zone_best = std::max(zone_best, can);
          if (can < gp.units && physical(p, Placement{}) >= gp.units &&
              within_share(p, Placement{}, gp.units) < gp.units) {
            share_bound = p;
          }
          if (fleet_.pools[p].cohort >= 0 && physical(p, Placement{}) < gp.units) cohort_full = p;
          const CapacityPool& pool = fleet_.pools[p];
          if (!pool.capacity_steps.empty()) {
            const int now_units = pool.UnitsAvailableAt(cycle.now, fleet_.epoch);
            if (now_units < pool.units) short_now.push_back({&pool, now_units});
          }
        }
      }
      free_sum += zone_best;
      if (zone_best > best_free || best_zone.empty()) {
        best_free = zone_best;
        best_zone = zone_names_[z];
      }
    }
    GangText text{gp.machine_type, gp.tpu_chips, gp.units, job.region, models};
    if (largest_pool < gp.units) {
      out.code = ReasonCode::kNeverFits;
      out.message = NeverFitsCapacityMessage(text, largest_pool);
      return out;
    }
    if (best_free >= gp.units) continue;  // this pool fits alone somewhere; the gang does not
    if (share_bound >= 0) {
      const CapacityPool& pool = fleet_.pools[share_bound];
      const Cohort& cohort = fleet_.cohorts[pool.cohort];
      const CohortMember* me = cohort.Member(job.project_id);
      const std::string& resource = resource_of_pool_[share_bound];
      auto limit = me->borrowing_limit.find(resource);
      out.code = ReasonCode::kShareExhausted;
      out.message = ShareExhaustedMessage(
          cohort.name, job.project_id, resource, CohortUsage(pool.cohort, resource, job.project_id),
          cohort_now_[pool.cohort].Nominal(*me, resource),
          limit == me->borrowing_limit.end() ? std::nullopt : std::optional(limit->second),
          std::max<int64_t>(0, Headroom(job.project_id, share_bound, extra)), gp.units);
      return out;
    }
    if (job.strategy == SchedulingStrategy::kFlexStart) {
      out.code = ReasonCode::kWaitingForDws;
      out.message = WaitingForDwsMessage(text, job, cycle.now);
      return out;
    }
    out.code = free_sum >= gp.units ? ReasonCode::kNoZoneFitsGang : ReasonCode::kNoCapacity;
    out.message = out.code == ReasonCode::kNoZoneFitsGang
                      ? NoZoneFitsMessage(text, best_zone, best_free)
                      : NoCapacityMessage(text, best_zone, best_free);
    if (!short_now.empty()) out.message += "; " + CapacityShortMessage(short_now);
    if (cohort_full >= 0) {
      // Say who holds the cohort's capacity, so a member sees whether it is over its share.
      const CapacityPool& pool = fleet_.pools[cohort_full];
      const Cohort& cohort = fleet_.cohorts[pool.cohort];
      const std::string& resource = resource_of_pool_[cohort_full];
      const CohortMember* me = cohort.Member(job.project_id);
      int64_t used = 0;
      for (const CohortMember& m : cohort.members)
        used += CohortUsage(pool.cohort, resource, m.project);
      out.message += "; " +
                     CohortFullMessage(cohort.name, resource, used,
                                       cohort_now_[pool.cohort].Capacity(resource), job.project_id,
                                       CohortUsage(pool.cohort, resource, job.project_id),
                                       cohort_now_[pool.cohort].Nominal(*me, resource)) +
                     "; " + FairShareText(job, pool.cohort);
    }
    return out;
  }
  if (job.strategy == SchedulingStrategy::kFlexStart) {
    out.code = ReasonCode::kWaitingForDws;
    out.message = WaitingForDwsMessage(GangText{job.pools[0].machine_type, job.pools[0].tpu_chips,
                                                job.pools[0].units, job.region, models},
                                       job, cycle.now);
    return out;
  }
  out.code = ReasonCode::kNoZoneFitsGang;
  out.message = GangSplitMessage(job.region, job.pools.size());
  return out;
}

Scheduler::FitOutcome Scheduler::FitOnResource(const SchedulerJob& job) const {
  FitOutcome out;
  const std::string name = job.on_resource.substr(job.on_resource.rfind('/') + 1);
  auto it = resources_.find(job.on_resource);
  if (it == resources_.end() || !it->second.ready) {
    out.code = ReasonCode::kResourceNotReady;
    out.message = ResourceNotReadyMessage(name);
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
    out.code = ReasonCode::kNoCapacity;
    out.message = ResourceBusyMessage(name, gp.machine_type, gp.units, best_free, largest);
    return out;
  }
  out.fits = true;
  out.placement = std::move(placement);
  return out;
}

}  // namespace trainyard
