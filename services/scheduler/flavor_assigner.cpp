#include "services/scheduler/flavor_assigner.h"

#include <algorithm>
#include <array>
#include <tuple>

#include "services/jobs/catalog.h"

namespace trainyard {
namespace {

using CM = ConsumptionModel;
using std::chrono::duration_cast;
using std::chrono::microseconds;

int64_t TakenIn(const Placement& placement, int pool) {
  int64_t sum = 0;
  for (const PlacedPool& pp : placement.pools) {
    if (pp.pool == pool) sum += pp.units;
  }
  return sum;
}

const Placement kNothingTaken;

// Zones where the first worker pool fits its most preferred flavor come first (reservations
// before on-demand, whichever zone they are in), then those where it spans the fewest blocks (a
// gang inside one block all-reduces fastest: services/jobs/gang_network.h; a pool without blocks
// counts as one), then the most free.
struct ZoneRank {
  size_t flavor;
  int blocks;
  int64_t neg_free;
  int zone;
  bool operator<(const ZoneRank& o) const {
    return std::tie(flavor, blocks, neg_free, zone) <
           std::tie(o.flavor, o.blocks, o.neg_free, o.zone);
  }
};

constexpr int kNoBlocksRank = 1 << 30;  // the first worker pool fits no pool of the zone

}  // namespace

ReasonCode CodeOf(const FitReason& reason) {
  struct Code {
    ReasonCode operator()(const fit_reason::NoRegion&) const { return ReasonCode::kNeverFits; }
    ReasonCode operator()(const fit_reason::HeldForReservation&) const {
      return ReasonCode::kHeldForReservation;
    }
    ReasonCode operator()(const fit_reason::NeverFits&) const { return ReasonCode::kNeverFits; }
    ReasonCode operator()(const fit_reason::ShareExhausted&) const {
      return ReasonCode::kShareExhausted;
    }
    ReasonCode operator()(const fit_reason::WaitingForDws&) const {
      return ReasonCode::kWaitingForDws;
    }
    ReasonCode operator()(const fit_reason::NoCapacity& r) const {
      return r.split_over_zones ? ReasonCode::kNoZoneFitsGang : ReasonCode::kNoCapacity;
    }
    ReasonCode operator()(const fit_reason::GangSplit&) const {
      return ReasonCode::kNoZoneFitsGang;
    }
    ReasonCode operator()(const fit_reason::ResourceNotReady&) const {
      return ReasonCode::kResourceNotReady;
    }
    ReasonCode operator()(const fit_reason::ResourceBusy&) const { return ReasonCode::kNoCapacity; }
  };
  return std::visit(Code{}, reason);
}

void FlavorOrder(const SchedulerJob& job, std::vector<ConsumptionModel>& into) {
  switch (job.strategy) {
    case SchedulingStrategy::kSpot:
      into.assign({CM::kSpot});
      return;
    case SchedulingStrategy::kLowCost:
      into.assign({CM::kSpot, CM::kOnDemand});
      return;
    case SchedulingStrategy::kFlexStart:
      into.assign({CM::kFlexStart});
      return;
    default:
      if (job.affinity == ReservationAffinityType::kNoReservation) {
        into.assign({CM::kOnDemand});
      } else if (job.affinity == ReservationAffinityType::kSpecificReservation) {
        into.assign({CM::kReservation});
      } else {
        into.assign({CM::kReservation, CM::kOnDemand});
      }
  }
}

std::vector<ConsumptionModel> FlavorOrder(const SchedulerJob& job) {
  std::vector<ConsumptionModel> out;
  FlavorOrder(job, out);
  return out;
}

// One job's fit: the units of each pool it may take, given what the placement being built
// already takes.
class FlavorAssigner::Fit {
 public:
  Fit(const SchedulerJob& job, const CapacitySnapshot& snapshot, const FitOptions& options,
      const DwsQueue* dws)
      : job(job),
        snapshot(snapshot),
        options(options),
        now(snapshot.now()),
        job_end(now + duration_cast<microseconds>(job.expected_runtime)),
        dws(dws) {}

  // Free, plus planned releases; nothing of a DWS pool before the request's grant there.
  int64_t Physical(int pool, const Placement& taken) const {
    if (!Granted(pool)) return 0;
    return snapshot.Available(pool, now) + FreedIn(options.freed, pool) - TakenIn(taken, pool);
  }
  bool Granted(int pool) const {
    if (dws == nullptr || snapshot.fleet().pools[pool].model != CM::kFlexStart) return true;
    return GrantAt(pool) <= now;
  }
  Timestamp GrantAt(int pool) const {
    for (const auto& [p, at] : grants) {
      if (p == pool) return at;
    }
    grants.emplace_back(pool, dws->GrantAt(snapshot.fleet(), pool, job));
    return grants.back().second;
  }
  // A cohort's pool: no more than the project's share allows, less what this placement already
  // takes of the same resource.
  int64_t WithinShare(int pool, const Placement& taken, int64_t a) const {
    const Fleet& fleet = snapshot.fleet();
    if (fleet.pools[pool].cohort < 0) return a;
    const auto& resource_of = snapshot.index().resource_of_pool;
    int64_t same = 0;
    for (const PlacedPool& pp : taken.pools) {
      if (resource_of[pp.pool] == resource_of[pool] &&
          fleet.pools[pp.pool].cohort == fleet.pools[pool].cohort) {
        same += pp.units;
      }
    }
    return std::min(a, snapshot.Headroom(job.project_id, pool, options.freed) - same);
  }
  int64_t Unheld(int pool, const Placement& taken) const {
    return WithinShare(pool, taken, Physical(pool, taken));
  }
  // Less what holds keep for earlier starving jobs (unless this job ends before they start);
  // `held` (if any) learns the hold that limits it.
  int64_t Usable(int pool, const Placement& taken, const CapacityHold** held) const {
    int64_t a = Unheld(pool, taken);
    if (options.holds.empty()) return a;
    if (!holds_read) ReadHolds();
    for (const PoolHold& ph : held_pools) {
      if (ph.pool != pool) continue;
      // The least slack of the holds on the pool, which the first of them with it keeps.
      const int64_t limited = ph.slack - TakenIn(taken, pool);
      if (limited < a) {
        if (held != nullptr) *held = ph.hold;
        a = limited;
      }
      break;
    }
    return a;
  }

  const SchedulerJob& job;
  const CapacitySnapshot& snapshot;
  const FitOptions& options;
  const Timestamp now;
  const Timestamp job_end;
  const DwsQueue* dws;

 private:
  // The holds that keep capacity from this job (not its own, none it ends before), read once per
  // fit: a fit asks about each pool many times, and each hold's slack was searched every time.
  // Per pool: the least slack of those holds and the first hold with it.
  struct PoolHold {
    int pool = 0;
    int64_t slack = 0;
    const CapacityHold* hold = nullptr;
  };
  void ReadHolds() const {
    holds_read = true;
    for (const CapacityHold& h : options.holds) {
      if (h.job_id == job.id) continue;
      if (job_end <= h.start) {
        // Passed only while the job would end by then: once now + its runtime is later, it is not.
        if (Timestamp* until = options.holds_passable_until) {
          *until = std::min(*until, h.start - (job_end - now) + microseconds(1));
        }
        continue;
      }
      for (const auto& [pool, slack] : h.slack) {
        // Captured by name: clang 14 (the fuzz build) cannot capture a structured binding.
        auto it = std::find_if(held_pools.begin(), held_pools.end(),
                               [p = pool](const PoolHold& ph) { return ph.pool == p; });
        if (it == held_pools.end()) {
          held_pools.push_back({pool, slack, &h});
        } else if (slack < it->slack) {
          *it = {pool, slack, &h};
        }
      }
    }
  }
  mutable bool holds_read = false;
  mutable std::vector<PoolHold> held_pools;

 public:
  // A request's grant per DWS pool, drawn once per fit: a fit asks about a pool many times.
  mutable std::vector<std::pair<int, Timestamp>> grants;
};

// One worker pool of the gang over the region's zones: what the why-not says about it.
struct FlavorAssigner::PoolScan {
  int64_t largest_pool = 0;
  int64_t best_free = 0;
  int64_t free_sum = 0;
  std::string best_zone;
  int best_zone_index = -1;
  int share_bound = -1;  // a cohort pool with room for the pool but not within the share
  int cohort_full = -1;  // a cohort pool of the job's cohort without room
  std::vector<ShortPool> short_now;  // pools offering less than they have: stockouts, spot
};

FlavorAssigner::FlavorAssigner(const Fleet& fleet, const FleetIndex& index, Duration exemption)
    : fleet_(fleet), index_(index), exemption_(exemption) {}

bool FlavorAssigner::PoolMatches(int p, const SchedulerJob& job, const GangPool& gp,
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
    const int zone = index_.zone_of_pool[p];
    return pool.model == model && gp.cpu_only &&
           index_.PoolsFor(zone, gp).size() == index_.elastic_pools_of_zone[zone].size();
  }
  if (pool.model != model || pool.machine_type != gp.machine_type ||
      pool.tpu_chips != gp.tpu_chips) {
    return false;
  }
  if (pool.cohort >= 0) {
    // A cohort's pool serves its members, whatever the reservation's own project list says.
    auto member = index_.cohort_of_project.find(job.project_id);
    if (member == index_.cohort_of_project.end() || member->second != pool.cohort) return false;
  } else if (model == CM::kReservation && !pool.UsableBy(job.project_id)) {
    return false;
  }
  if (model != CM::kReservation) return true;
  if (job.affinity != ReservationAffinityType::kSpecificReservation) return true;
  return std::find(job.reservations.begin(), job.reservations.end(), pool.reservation) !=
         job.reservations.end();
}

FitResult FlavorAssigner::Assign(const SchedulerJob& job, const CapacitySnapshot& snapshot,
                                 const FitOptions& options) const {
  FitResult out;
  auto region = index_.region_index.find(job.region);
  if (region == index_.region_index.end() || job.pools.empty()) {
    out.reason = fit_reason::NoRegion{job.region};
    return out;
  }
  const Fit fit(job, snapshot, options, dws_);
  const CapacityHold* held_by = nullptr;
  out.placement = Search(fit, region->second, &held_by);
  if (out.placement) return out;
  if (held_by != nullptr) {
    out.reason = fit_reason::HeldForReservation{held_by->job_id, held_by->priority, held_by->start};
  } else {
    out.reason = WhyNot(fit, region->second);
  }
  return out;
}

std::optional<Placement> FlavorAssigner::Place(const SchedulerJob& job,
                                               const CapacitySnapshot& snapshot,
                                               const FitOptions& options) const {
  auto region = index_.region_index.find(job.region);
  if (region == index_.region_index.end() || job.pools.empty()) return std::nullopt;
  const Fit fit(job, snapshot, options, dws_);
  return Search(fit, region->second, nullptr);
}

// The zones in rank order, the first where the whole gang fits.
std::optional<Placement> FlavorAssigner::Search(const Fit& fit, int region,
                                                const CapacityHold** held_by) const {
  const SchedulerJob& job = fit.job;
  const std::span<const ConsumptionModel> models = fit.options.flavors;
  // A region's few zones ranked on the stack: a fit runs for each job evaluated and for each
  // release backfill walks, and a vector cost each a malloc.
  const std::vector<int>& region_zones = index_.zones_of_region[region];
  std::array<ZoneRank, 8> few{};
  std::vector<ZoneRank> many;
  if (region_zones.size() > few.size()) many.reserve(region_zones.size());
  size_t count = 0;
  auto add = [&](const ZoneRank& rank) {
    if (region_zones.size() > few.size()) {
      many.push_back(rank);
    } else {
      few[count] = rank;
    }
    ++count;
  };
  for (int z : region_zones) {
    if (fit.options.only_zone && z != *fit.options.only_zone) continue;
    ZoneRank rank{models.size(), kNoBlocksRank, 0, z};
    for (int p : index_.PoolsFor(z, job.pools[0])) {
      for (size_t m = 0; m < models.size(); ++m) {
        if (!PoolMatches(p, job, job.pools[0], models[m])) continue;
        int64_t free = fit.Usable(p, kNothingTaken, nullptr);
        rank.neg_free -= free;
        if (free < job.pools[0].units || m > rank.flavor) continue;
        const int blocks =
            std::max(1, fit.snapshot.BlocksFor(p, job.pools[0].units, kNothingTaken));
        if (m < rank.flavor) rank.blocks = blocks;  // a better flavor: its blocks alone count
        rank.flavor = m;
        rank.blocks = std::min(rank.blocks, blocks);
      }
    }
    add(rank);
  }
  const std::span<ZoneRank> zones = region_zones.size() > few.size()
                                        ? std::span<ZoneRank>(many)
                                        : std::span<ZoneRank>(few.data(), count);
  std::sort(zones.begin(), zones.end());
  for (const ZoneRank& zone_rank : zones) {
    if (std::optional<Placement> placement = PlaceInZone(fit, zone_rank.zone, held_by)) {
      return placement;
    }
  }
  return std::nullopt;
}

// Each worker pool on its most preferred flavor with room in `zone`, in the pool of that flavor
// where it spans the fewest blocks (the first of those); `held_by` learns a hold without which
// one would have fitted.
std::optional<Placement> FlavorAssigner::PlaceInZone(const Fit& fit, int zone,
                                                     const CapacityHold** held_by) const {
  Placement placement;
  placement.zone = index_.zone_names[zone];
  for (const GangPool& gp : fit.job.pools) {
    std::optional<int> chosen;
    int chosen_blocks = 0;
    for (ConsumptionModel m : fit.options.flavors) {
      for (int p : index_.PoolsFor(zone, gp)) {
        if (!PoolMatches(p, fit.job, gp, m)) continue;
        const CapacityHold* held = nullptr;
        if (fit.Usable(p, placement, &held) >= gp.units) {
          const int blocks = std::max(1, fit.snapshot.BlocksFor(p, gp.units, placement));
          if (!chosen || blocks < chosen_blocks) {
            chosen = p;
            chosen_blocks = blocks;
          }
          if (blocks == 1) break;  // none spans fewer
          continue;
        }
        if (held != nullptr && held_by != nullptr && fit.Unheld(p, placement) >= gp.units) {
          *held_by = held;
        }
      }
      if (chosen) break;
    }
    if (!chosen) return std::nullopt;
    PlacedPool placed{*chosen, gp.units, gp.machine_type, gp.attached_count, {}};
    placed.block_units = fit.snapshot.ChooseBlocks(*chosen, gp.units, placement);
    placement.pools.push_back(std::move(placed));
  }
  return placement;
}

// Why not: the gang's pools one at a time, most severe first.
FitReason FlavorAssigner::WhyNot(const Fit& fit, int region) const {
  for (const GangPool& gp : fit.job.pools) {
    const PoolScan scan = Scan(fit, region, gp);
    if (std::optional<FitReason> reason = ReasonOfPool(fit, gp, scan)) return std::move(*reason);
  }
  if (fit.job.strategy == SchedulingStrategy::kFlexStart) {
    return WaitingForDwsOf(fit, fit.job.pools[0]);
  }
  return fit_reason::GangSplit{fit.job.region, fit.job.pools.size()};
}

FlavorAssigner::PoolScan FlavorAssigner::Scan(const Fit& fit, int region,
                                              const GangPool& gp) const {
  PoolScan scan;
  for (int z : index_.zones_of_region[region]) {
    int64_t zone_best = 0;
    for (int p : index_.PoolsFor(z, gp)) {
      for (ConsumptionModel m : fit.options.flavors) {
        if (!PoolMatches(p, fit.job, gp, m)) continue;
        const CapacityPool& pool = fleet_.pools[p];
        scan.largest_pool = std::max<int64_t>(
            scan.largest_pool, pool.elastic ? CapacitySnapshot::kElasticUnits : pool.units);
        const int64_t can = fit.Usable(p, kNothingTaken, nullptr);
        zone_best = std::max(zone_best, can);
        const int64_t physical = fit.Physical(p, kNothingTaken);
        if (can < gp.units && physical >= gp.units &&
            fit.WithinShare(p, kNothingTaken, gp.units) < gp.units) {
          scan.share_bound = p;
        }
        if (pool.cohort >= 0 && physical < gp.units) scan.cohort_full = p;
        if (!pool.capacity_steps.empty()) {
          const int now_units = pool.UnitsAvailableAt(fit.now, fleet_.epoch);
          if (now_units < pool.units) scan.short_now.push_back({&pool, now_units});
        }
      }
    }
    scan.free_sum += zone_best;
    if (zone_best > scan.best_free || scan.best_zone.empty()) {
      scan.best_free = zone_best;
      scan.best_zone = index_.zone_names[z];
      scan.best_zone_index = z;
    }
  }
  return scan;
}

// Why worker pool `gp` keeps the gang out; nothing when it fits alone somewhere.
std::optional<FitReason> FlavorAssigner::ReasonOfPool(const Fit& fit, const GangPool& gp,
                                                      const PoolScan& scan) const {
  const std::span<const ConsumptionModel> flavors = fit.options.flavors;
  GangText gang{gp.machine_type,
                gp.tpu_chips,
                gp.units,
                fit.job.region,
                std::vector<ConsumptionModel>(flavors.begin(), flavors.end()),
                static_cast<size_t>(&gp - fit.job.pools.data())};
  if (scan.largest_pool < gp.units)
    return fit_reason::NeverFits{std::move(gang), scan.largest_pool};
  if (scan.best_free >= gp.units) return std::nullopt;  // fits alone somewhere; the gang does not
  if (scan.share_bound >= 0) return ShareExhaustedAt(fit, scan.share_bound, gp.units);
  if (fit.job.strategy == SchedulingStrategy::kFlexStart) return WaitingForDwsOf(fit, gp);
  fit_reason::NoCapacity reason;
  reason.gang = std::move(gang);
  reason.split_over_zones = scan.free_sum >= gp.units;
  reason.best_zone = scan.best_zone;
  reason.best_zone_index = scan.best_zone_index;
  reason.best_free = scan.best_free;
  reason.short_now = scan.short_now;
  // Who holds the cohort's capacity, so a member sees whether it is over its share.
  if (scan.cohort_full >= 0) reason.cohort_full = CohortFullAt(fit, scan.cohort_full);
  return reason;
}

fit_reason::ShareExhausted FlavorAssigner::ShareExhaustedAt(const Fit& fit, int p,
                                                            int64_t need) const {
  const CapacitySnapshot& snapshot = fit.snapshot;
  const CapacityPool& pool = fleet_.pools[p];
  const Cohort& cohort = fleet_.cohorts[pool.cohort];
  const CohortMember* me = cohort.Member(fit.job.project_id);
  const std::string& resource = index_.resource_of_pool[p];
  auto limit = me->borrowing_limit.find(resource);
  fit_reason::ShareExhausted reason;
  reason.cohort = cohort.name;
  reason.project = fit.job.project_id;
  reason.resource = resource;
  reason.used = snapshot.CohortUsage(pool.cohort, resource, fit.job.project_id);
  reason.nominal = snapshot.CohortNow(pool.cohort).Nominal(*me, resource);
  if (limit != me->borrowing_limit.end()) reason.borrowing_limit = limit->second;
  reason.may_take =
      std::max<int64_t>(0, snapshot.Headroom(fit.job.project_id, p, fit.options.freed));
  reason.need = need;
  return reason;
}

fit_reason::CohortFull FlavorAssigner::CohortFullAt(const Fit& fit, int p) const {
  const CapacitySnapshot& snapshot = fit.snapshot;
  const CapacityPool& pool = fleet_.pools[p];
  const Cohort& cohort = fleet_.cohorts[pool.cohort];
  const std::string& resource = index_.resource_of_pool[p];
  const CohortMember* me = cohort.Member(fit.job.project_id);
  fit_reason::CohortFull full;
  full.cohort = cohort.name;
  full.resource = resource;
  for (const CohortMember& m : cohort.members) {
    full.used += snapshot.CohortUsage(pool.cohort, resource, m.project);
  }
  full.capacity = snapshot.CohortNow(pool.cohort).Capacity(resource);
  full.project = fit.job.project_id;
  full.project_used = snapshot.CohortUsage(pool.cohort, resource, fit.job.project_id);
  full.nominal = snapshot.CohortNow(pool.cohort).Nominal(*me, resource);
  full.fair = snapshot.FairShareOf(fit.job, pool.cohort);
  full.exemption = exemption_;
  return full;
}

fit_reason::WaitingForDws FlavorAssigner::WaitingForDwsOf(const Fit& fit,
                                                          const GangPool& gp) const {
  const std::span<const ConsumptionModel> flavors = fit.options.flavors;
  fit_reason::WaitingForDws reason;
  reason.gang = GangText{gp.machine_type,
                         gp.tpu_chips,
                         gp.units,
                         fit.job.region,
                         std::vector<ConsumptionModel>(flavors.begin(), flavors.end()),
                         static_cast<size_t>(&gp - fit.job.pools.data())};
  reason.queue_time = fit.job.DwsRequestTime();
  reason.deadline = fit.job.dws_deadline;
  reason.now = fit.now;
  if (dws_ == nullptr) return reason;
  // The queue's word: when the first of the region's DWS pools grants the request.
  reason.nodes_ahead = dws_->NodesAhead(fit.job);
  auto region = index_.region_index.find(fit.job.region);
  for (int z : index_.zones_of_region[region->second]) {
    for (int p : index_.PoolsFor(z, gp)) {
      if (!PoolMatches(p, fit.job, gp, CM::kFlexStart)) continue;
      const Timestamp at = fit.GrantAt(p);
      if (!reason.granted_at || at < *reason.granted_at) reason.granted_at = at;
    }
  }
  return reason;
}

}  // namespace trainyard
