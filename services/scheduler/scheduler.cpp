#include "services/scheduler/scheduler.h"

#include <algorithm>
#include <array>
#include <queue>

#include "services/scheduler/verdict_text.h"

namespace trainyard {
namespace {

using CM = ConsumptionModel;
using std::chrono::duration_cast;
using std::chrono::microseconds;

std::string RegionOfZone(const std::string& zone) {
  size_t dash = zone.rfind('-');
  return dash == std::string::npos ? zone : zone.substr(0, dash);
}

int64_t ExtraFor(const void* extra_ptr, int pool) {
  if (extra_ptr == nullptr) return 0;
  const auto& extra = *static_cast<const std::vector<std::pair<int, int64_t>>*>(extra_ptr);
  int64_t sum = 0;
  for (const auto& [p, units] : extra) {
    if (p == pool) sum += units;
  }
  return sum;
}

int64_t TakenIn(const Placement& placement, int pool) {
  int64_t sum = 0;
  for (const PlacedPool& pp : placement.pools) {
    if (pp.pool == pool) sum += pp.units;
  }
  return sum;
}

}  // namespace

// What one cycle remembers: verdicts per shape, holds for starving jobs, victims already claimed.
struct Scheduler::Cycle {
  Timestamp now{};
  double budget = 0;
  std::unordered_map<std::string, Verdict> shape_verdicts;
  std::vector<Hold> holds;
  std::unordered_set<int64_t> claimed;
  int victims_left = 0;
  int reservations_left = 0;
  std::unordered_set<int64_t> evaluated;
};

Scheduler::Scheduler(const Fleet& fleet, SchedulerConfig config) : fleet_(fleet), config_(config) {
  std::unordered_map<std::string, int> zone_index;
  for (size_t p = 0; p < fleet_.pools.size(); ++p) {
    const CapacityPool& pool = fleet_.pools[p];
    auto [zit, new_zone] = zone_index.try_emplace(pool.zone, static_cast<int>(zone_names_.size()));
    if (new_zone) {
      zone_names_.push_back(pool.zone);
      pools_of_zone_.emplace_back();
      std::string region = pool.region.empty() ? RegionOfZone(pool.zone) : pool.region;
      auto [rit, new_region] =
          region_index_.try_emplace(region, static_cast<int>(zones_of_region_.size()));
      if (new_region) zones_of_region_.emplace_back();
      zones_of_region_[rit->second].push_back(zit->second);
    }
    pools_of_zone_[zit->second].push_back(static_cast<int>(p));
    zone_of_pool_.push_back(zit->second);
  }
  explicit_types_of_zone_.resize(zone_names_.size());
  for (size_t p = 0; p < fleet_.pools.size(); ++p) {
    if (!fleet_.pools[p].elastic) {
      explicit_types_of_zone_[zone_of_pool_[p]].insert(fleet_.pools[p].machine_type);
    }
  }
  used_.assign(fleet_.pools.size(), 0);
  down_.assign(fleet_.pools.size(), 0);
}

int Scheduler::QueueFor(const std::string& project_id, const std::string& region) {
  std::string key = project_id + "|" + region;
  auto [it, inserted] = queue_index_.try_emplace(key, static_cast<int>(queues_.size()));
  if (inserted) {
    queues_.emplace_back();
    queues_.back().project_id = project_id;
    queues_.back().region = region;
  }
  return it->second;
}

Scheduler::RankKey Scheduler::KeyOf(const SchedulerJob& job) const {
  return {-job.priority, ToUnixMicros(job.queue_time), job.id};
}

void Scheduler::UpsertPending(SchedulerJob job) {
  if (auto it = pending_.find(job.id); it != pending_.end()) {
    if (it->second.job.version >= job.version) return;
    Remove(job.id);
  }
  Remove(job.id);  // a requeued job leaves the running set
  PendingEntry entry;
  entry.queue = QueueFor(job.project_id, job.region);
  if (job.dws_deadline) dws_deadlines_.insert({*job.dws_deadline, job.id});
  entry.job = std::move(job);
  int64_t id = entry.job.id;
  PendingEntry& stored = pending_.emplace(id, std::move(entry)).first->second;
  Queue& queue = queues_[stored.queue];
  queue.order.insert({KeyOf(stored.job), &stored});
  queue.positions_stale = true;
}

void Scheduler::UpsertRunning(RunningJob job) {
  Remove(job.id);
  AddUsage(job, +1);
  int64_t id = job.id;
  running_.emplace(id, std::move(job));
}

void Scheduler::Remove(int64_t id) {
  if (auto it = pending_.find(id); it != pending_.end()) {
    const PendingEntry& entry = it->second;
    Queue& queue = queues_[entry.queue];
    SetOf(queue, entry.parked).erase(KeyOf(entry.job));
    queue.positions_stale = true;
    if (entry.job.dws_deadline) dws_deadlines_.erase({*entry.job.dws_deadline, id});
    if (entry.never_fits_deadline) never_fits_deadlines_.erase({*entry.never_fits_deadline, id});
    pending_.erase(it);
  }
  if (auto it = running_.find(id); it != running_.end()) {
    AddUsage(it->second, -1);
    running_.erase(it);
  }
}

Scheduler::OrderedKeys& Scheduler::SetOf(Queue& queue, Parked parked) {
  switch (parked) {
    case Parked::kUntilQuotaFrees:
      return queue.quota_parked;
    case Parked::kUntilFleetChanges:
      return queue.never_parked;
    case Parked::kNo:
      break;
  }
  return queue.order;
}

void Scheduler::Clear() {
  pending_.clear();
  running_.clear();
  dws_deadlines_.clear();
  never_fits_deadlines_.clear();
  quota_freed_.clear();
  queues_.clear();
  queue_index_.clear();
  quota_used_.clear();
  std::fill(used_.begin(), used_.end(), 0);
}

void Scheduler::SetUnitsDown(int pool, int64_t units) {
  if (pool >= 0 && pool < static_cast<int>(down_.size())) down_[pool] = units;
}

void Scheduler::AddUsage(const RunningJob& job, int sign) {
  for (const PlacedPool& pp : job.placement.pools) used_[pp.pool] += sign * pp.units;
  for (const QuotaDemand& d : job.quota) {
    quota_used_[job.project_id + "|" + d.metric] += sign * d.amount;
  }
  int q = QueueFor(job.project_id, job.region);
  if (sign > 0) {
    queues_[q].running.insert(job.id);
  } else {
    queues_[q].running.erase(job.id);
    if (!job.quota.empty()) quota_freed_.insert(job.project_id);
  }
}

int64_t Scheduler::QuotaUsed(const std::string& project_id, const std::string& metric) const {
  auto it = quota_used_.find(project_id + "|" + metric);
  return it == quota_used_.end() ? 0 : it->second;
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
  if (pool.elastic) {
    // Only for a CPU-only type the zone has no explicit (bounded) pool of.
    return pool.model == model && gp.cpu_only &&
           explicit_types_of_zone_[zone_of_pool_[p]].count(gp.machine_type) == 0;
  }
  if (pool.model != model || pool.machine_type != gp.machine_type ||
      pool.tpu_chips != gp.tpu_chips) {
    return false;
  }
  if (model != CM::kReservation) return true;
  if (!pool.UsableBy(job.project_id)) return false;
  if (job.affinity != ReservationAffinityType::kSpecificReservation) return true;
  return std::find(job.reservations.begin(), job.reservations.end(), pool.reservation) !=
         job.reservations.end();
}

Scheduler::FitOutcome Scheduler::Fit(const SchedulerJob& job, Cycle& cycle, const Extra* extra,
                                     int only_zone, bool use_holds,
                                     const std::vector<ConsumptionModel>& models) const {
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
  auto usable = [&](int pool, const Placement& taken, const Hold** held, bool holds = true) {
    int64_t a = Available(pool, cycle.now) + ExtraFor(extra, pool) - TakenIn(taken, pool);
    if (!use_holds || !holds) return a;
    for (const Hold& h : cycle.holds) {
      if (h.job_id == job.id || job_end <= h.start) continue;
      auto s = h.slack.find(pool);
      if (s == h.slack.end()) continue;
      int64_t limited = s->second - TakenIn(taken, pool);
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
    for (int p : pools_of_zone_[z]) {
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
        for (int p : pools_of_zone_[z]) {
          if (!PoolMatches(p, job, gp, m)) continue;
          const Hold* held = nullptr;
          int64_t a = usable(p, placement, &held);
          if (a >= gp.units) {
            placement.pools.push_back({p, gp.units, gp.machine_type});
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
    for (int z : zones_of_region_[region->second]) {
      int64_t zone_best = 0;
      for (int p : pools_of_zone_[z]) {
        for (ConsumptionModel m : models) {
          if (!PoolMatches(p, job, gp, m)) continue;
          largest_pool = std::max<int64_t>(
              largest_pool, fleet_.pools[p].elastic ? kElasticUnits : fleet_.pools[p].units);
          zone_best = std::max(zone_best, usable(p, Placement{}, nullptr));
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
    if (job.strategy == SchedulingStrategy::kFlexStart) {
      out.code = ReasonCode::kWaitingForDws;
      out.message = WaitingForDwsMessage(text, job, cycle.now);
      return out;
    }
    out.code = free_sum >= gp.units ? ReasonCode::kNoZoneFitsGang : ReasonCode::kNoCapacity;
    out.message = out.code == ReasonCode::kNoZoneFitsGang
                      ? NoZoneFitsMessage(text, best_zone, best_free)
                      : NoCapacityMessage(text, best_zone, best_free);
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

std::optional<Verdict> Scheduler::CheckQuota(const SchedulerJob& job, Cycle&,
                                             std::vector<ConsumptionModel>& models) const {
  std::vector<ConsumptionModel> fitting;
  std::optional<Verdict> first_block;
  bool all_never = true;
  for (ConsumptionModel m : models) {
    std::optional<Verdict> block;
    for (const QuotaDemand& d : job.quota) {
      std::string metric = QuotaMetricFor(d.metric, m);
      std::optional<int64_t> limit = fleet_.quotas.Limit(job.project_id, metric);
      if (!limit) continue;
      if (d.amount > *limit) {
        block = Verdict{ReasonCode::kNeverFits, NeverFitsQuotaMessage(metric, d.amount, *limit)};
        break;
      }
      int64_t used = QuotaUsed(job.project_id, metric);
      if (used + d.amount > *limit) {
        block = Verdict{ReasonCode::kQuotaExceeded, QuotaMessage(metric, used, *limit, d.amount)};
        all_never = false;
        break;
      }
    }
    if (!block) {
      fitting.push_back(m);
    } else if (!first_block) {
      first_block = block;
    }
  }
  if (!fitting.empty()) {
    models = std::move(fitting);
    return std::nullopt;
  }
  if (!all_never && first_block->code == ReasonCode::kNeverFits) {
    first_block->code = ReasonCode::kQuotaExceeded;
  }
  return first_block;
}

std::optional<std::vector<int64_t>> Scheduler::PlanPreemption(
    const SchedulerJob& job, Cycle& cycle, const std::vector<ConsumptionModel>& models,
    Placement& placement) const {
  auto q = queue_index_.find(job.project_id + "|" + job.region);
  if (q == queue_index_.end()) return std::nullopt;
  // Candidates: lower-priority admitted jobs of the same queue (Kueue's withinClusterQueue:
  // LowerPriority), never DWS work, which runs to its end once provisioned.
  std::unordered_map<std::string, std::vector<const RunningJob*>> by_zone;
  for (int64_t id : queues_[q->second].running) {
    const RunningJob& r = running_.at(id);
    if (r.priority >= job.priority || cycle.claimed.count(id) > 0) continue;
    bool dws = false;
    for (const PlacedPool& pp : r.placement.pools) {
      dws = dws || fleet_.pools[pp.pool].model == CM::kFlexStart;
    }
    if (!dws) by_zone[r.placement.zone].push_back(&r);
  }
  std::optional<std::vector<int64_t>> best;
  for (auto& [zone, candidates] : by_zone) {
    // Lowest priority first, then the newest admitted (least work lost).
    std::sort(candidates.begin(), candidates.end(), [](const RunningJob* a, const RunningJob* b) {
      if (a->priority != b->priority) return a->priority < b->priority;
      if (a->admitted_at != b->admitted_at) return a->admitted_at > b->admitted_at;
      return a->id > b->id;
    });
    int zone_index = zone_of_pool_[candidates[0]->placement.pools[0].pool];
    Extra extra;
    std::vector<const RunningJob*> victims;
    FitOutcome fit;
    for (const RunningJob* c : candidates) {
      for (const PlacedPool& pp : c->placement.pools) extra.push_back({pp.pool, pp.units});
      victims.push_back(c);
      fit = Fit(job, cycle, &extra, zone_index, true, models);
      if (fit.fits) break;
    }
    if (!fit.fits) continue;
    // Give back, newest pick first, every victim the fit does not need.
    for (size_t i = victims.size(); i-- > 0;) {
      Extra without;
      for (const auto& e : extra) without.push_back(e);
      for (const PlacedPool& pp : victims[i]->placement.pools)
        without.push_back({pp.pool, -pp.units});
      FitOutcome again = Fit(job, cycle, &without, zone_index, true, models);
      if (again.fits) {
        extra = std::move(without);
        fit = std::move(again);
        victims.erase(victims.begin() + static_cast<long>(i));
      }
    }
    if (static_cast<int>(victims.size()) > cycle.victims_left) continue;
    if (!best || victims.size() < best->size()) {
      best.emplace();
      for (const RunningJob* v : victims) best->push_back(v->id);
      placement = fit.placement;
    }
  }
  return best;
}

void Scheduler::ReserveCapacity(const SchedulerJob& job, Cycle& cycle,
                                const std::vector<ConsumptionModel>& models,
                                Verdict& verdict) const {
  // Slurm-style backfill on counts: walk running jobs' expected ends and book the first time the
  // gang fits.
  const Timestamp horizon = cycle.now + duration_cast<microseconds>(config_.backfill_horizon);
  std::vector<std::tuple<Timestamp, int, int64_t>> releases;
  for (const auto& [id, r] : running_) {
    if (r.region != job.region || r.expected_end > horizon) continue;
    for (const PlacedPool& pp : r.placement.pools) {
      releases.push_back({std::max(r.expected_end, cycle.now), pp.pool, pp.units});
    }
  }
  std::sort(releases.begin(), releases.end());
  Extra extra;
  for (size_t i = 0; i < releases.size();) {
    Timestamp t = std::get<0>(releases[i]);
    for (; i < releases.size() && std::get<0>(releases[i]) == t; ++i) {
      extra.push_back({std::get<1>(releases[i]), std::get<2>(releases[i])});
    }
    FitOutcome fit = Fit(job, cycle, &extra, -1, false, models);
    if (!fit.fits) continue;
    Hold hold;
    hold.job_id = job.id;
    hold.priority = job.priority;
    hold.start = t;
    for (const PlacedPool& pp : fit.placement.pools) {
      hold.slack[pp.pool] = Available(pp.pool, cycle.now) + ExtraFor(&extra, pp.pool) -
                            TakenIn(fit.placement, pp.pool);
    }
    cycle.holds.push_back(std::move(hold));
    --cycle.reservations_left;
    verdict.message += ReservedSuffix(fit.placement.zone, t);
    return;
  }
}

void Scheduler::Admit(PendingEntry& entry, const Placement& placement, std::vector<int64_t> victims,
                      Cycle& cycle, CycleResult& result) {
  for (int64_t v : victims) {
    cycle.claimed.insert(v);
    Remove(v);
  }
  cycle.victims_left -= static_cast<int>(victims.size());
  const SchedulerJob& job = entry.job;
  RunningJob r = MakeRunningJob(job, placement, fleet_, cycle.now);
  // Later long jobs eat into the slack of holds on the pools they take.
  for (Hold& h : cycle.holds) {
    if (r.expected_end <= h.start) continue;
    for (const PlacedPool& pp : placement.pools) {
      if (auto s = h.slack.find(pp.pool); s != h.slack.end()) s->second -= pp.units;
    }
  }
  AdmissionDecision decision;
  decision.job_id = job.id;
  decision.version = job.version;
  decision.placement = placement;
  decision.image_uri = job.image_uri;
  decision.message = AdmittedMessage(fleet_, placement, victims.size());
  decision.victims = std::move(victims);
  result.admissions.push_back(std::move(decision));
  entry.admitted = true;
  UpsertRunning(std::move(r));  // also removes the pending entry
}

void Scheduler::Evaluate(PendingEntry& entry, Cycle& cycle, CycleResult& result) {
  const SchedulerJob& job = entry.job;
  cycle.evaluated.insert(job.id);
  entry.evaluated_in = cycles_;
  const bool flex = job.strategy == SchedulingStrategy::kFlexStart;
  const bool eligible = !flex && (job.priority >= config_.reserve_min_priority ||
                                  cycle.now - job.queue_time >=
                                      duration_cast<microseconds>(config_.reserve_min_wait));
  const std::string shape_key = eligible ? job.shape + "|reserve" : job.shape;
  if (!eligible) {
    if (auto cached = cycle.shape_verdicts.find(shape_key); cached != cycle.shape_verdicts.end()) {
      entry.verdict.code = cached->second.code;
      entry.verdict.message = cached->second.message;
      cycle.budget -= 0.05;
      ++result.reused;
      return;
    }
  }
  cycle.budget -= 1;
  ++result.evaluations;

  std::vector<ConsumptionModel> models = FlavorOrder(job);
  if (std::optional<Verdict> blocked = CheckQuota(job, cycle, models)) {
    entry.verdict.code = blocked->code;
    entry.verdict.message = blocked->message;
    cycle.shape_verdicts[shape_key] = entry.verdict;
    return;
  }
  FitOutcome fit = Fit(job, cycle, nullptr, -1, true, models);
  if (fit.fits) {
    Admit(entry, fit.placement, {}, cycle, result);
    return;
  }
  if (fit.code != ReasonCode::kNeverFits && !flex && cycle.victims_left > 0) {
    Placement placement;
    if (auto victims = PlanPreemption(job, cycle, models, placement)) {
      Admit(entry, placement, std::move(*victims), cycle, result);
      return;
    }
  }
  entry.verdict.code = fit.code;
  entry.verdict.message = fit.message;
  const bool capacity_bound =
      fit.code == ReasonCode::kNoCapacity || fit.code == ReasonCode::kNoZoneFitsGang;
  if (eligible && capacity_bound && cycle.reservations_left > 0) {
    ReserveCapacity(job, cycle, models, entry.verdict);
    return;
  }
  if (!eligible) cycle.shape_verdicts[shape_key] = entry.verdict;
}

bool Scheduler::Park(PendingEntry& entry, const Cycle& cycle) {
  if (entry.parked != Parked::kNo) return false;
  Parked to = Parked::kNo;
  if (entry.verdict.code == ReasonCode::kNeverFits) to = Parked::kUntilFleetChanges;
  if (entry.verdict.code == ReasonCode::kQuotaExceeded) to = Parked::kUntilQuotaFrees;
  if (to == Parked::kNo) return false;
  Queue& queue = queues_[entry.queue];
  const RankKey key = KeyOf(entry.job);
  queue.order.erase(key);
  SetOf(queue, to).insert({key, &entry});
  entry.parked = to;
  const Duration timeout = fleet_.never_fits_timeout;
  if (to == Parked::kUntilFleetChanges && timeout > Duration{}) {
    // From when this fleet could first have said so: a job queued before a restart (perhaps on
    // another fleet) gets the whole wait again.
    const Timestamp from = std::max(entry.job.queue_time, first_cycle_.value_or(cycle.now));
    entry.never_fits_deadline = from + duration_cast<microseconds>(timeout);
    never_fits_deadlines_.insert({*entry.never_fits_deadline, entry.job.id});
  }
  return true;
}

void Scheduler::UnparkQuotaWaiters() {
  if (quota_freed_.empty()) return;
  for (Queue& queue : queues_) {
    if (queue.quota_parked.empty() || quota_freed_.count(queue.project_id) == 0) continue;
    for (const auto& [key, entry] : queue.quota_parked) {
      entry->parked = Parked::kNo;
      queue.order.insert({key, entry});
    }
    queue.quota_parked.clear();
  }
  quota_freed_.clear();
}

void Scheduler::Report(PendingEntry& entry, int64_t position, CycleResult& result) {
  const int64_t shown = DisplayPosition(position);
  const bool evaluated = entry.evaluated_in == cycles_;
  // Most of a deep queue: not looked at, and its shown place has not moved.
  if (!evaluated && entry.reported && entry.reported->position == shown) return;
  Verdict v = entry.verdict;
  v.position = shown;
  if (!evaluated && v.code == ReasonCode::kNotEvaluated) {
    v.message = NotEvaluatedMessage(v.position, config_.lookback);
  }
  entry.verdict = v;
  if (entry.reported && *entry.reported == v) return;
  const bool code_changed = !entry.reported || entry.reported->code != v.code;
  entry.reported = v;
  result.verdicts.push_back({entry.job.id, entry.job.version, v, code_changed});
}

// Positions count every waiting job of the queue, parked or not, in rank order. They change only
// when a job joins or leaves the queue, so only those queues are walked; elsewhere only the jobs
// evaluated this cycle may have a new verdict.
void Scheduler::ReportPositions(Cycle& cycle, CycleResult& result) {
  std::vector<bool> walked(queues_.size(), false);
  for (size_t q = 0; q < queues_.size(); ++q) {
    Queue& queue = queues_[q];
    if (!queue.positions_stale) continue;
    queue.positions_stale = false;
    walked[q] = true;
    std::array<std::pair<OrderedKeys::iterator, OrderedKeys::iterator>, 3> sets = {
        std::pair{queue.order.begin(), queue.order.end()},
        std::pair{queue.quota_parked.begin(), queue.quota_parked.end()},
        std::pair{queue.never_parked.begin(), queue.never_parked.end()}};
    int64_t position = 0;
    while (true) {
      auto* next = static_cast<std::pair<OrderedKeys::iterator, OrderedKeys::iterator>*>(nullptr);
      for (auto& set : sets) {
        if (set.first != set.second && (next == nullptr || set.first->first < next->first->first)) {
          next = &set;
        }
      }
      if (next == nullptr) break;
      Report(*next->first->second, ++position, result);
      ++next->first;
    }
  }
  for (int64_t id : cycle.evaluated) {
    auto it = pending_.find(id);
    if (it == pending_.end() || walked[it->second.queue]) continue;
    PendingEntry& entry = it->second;
    Report(entry, entry.reported ? entry.reported->position : 0, result);
  }
}

CycleResult Scheduler::RunCycle(Timestamp now) {
  CycleResult result;
  Cycle cycle;
  cycle.now = now;
  cycle.budget = config_.evaluation_budget;
  cycle.victims_left = config_.max_victims;
  cycle.reservations_left = config_.max_reservations;

  if (!first_cycle_) first_cycle_ = now;
  ++cycles_;
  UnparkQuotaWaiters();

  // DWS requests that waited their maxWaitDuration fail (Vertex: FLEX_START, default 24h).
  while (!dws_deadlines_.empty() && dws_deadlines_.begin()->first <= now) {
    int64_t id = dws_deadlines_.begin()->second;
    const PendingEntry& entry = pending_.at(id);
    result.failures.push_back({id, entry.job.version, DwsTimeoutMessage(entry.job)});
    Remove(id);
  }
  // So do jobs that can never fit this fleet once it has not changed for the fleet's
  // neverFitsTimeout (like a Vertex stockout).
  while (!never_fits_deadlines_.empty() && never_fits_deadlines_.begin()->first <= now) {
    int64_t id = never_fits_deadlines_.begin()->second;
    const PendingEntry& entry = pending_.at(id);
    result.failures.push_back(
        {id, entry.job.version,
         NeverFitsTimeoutMessage(entry.verdict.message, fleet_.never_fits_timeout)});
    Remove(id);
  }

  // One cursor per queue, best head first (scheduler-design.md §3, refill with budget E).
  struct Cursor {
    RankKey key;
    int queue;
    OrderedKeys::iterator it;
    int visited;
    bool operator>(const Cursor& other) const { return key > other.key; }
  };
  std::priority_queue<Cursor, std::vector<Cursor>, std::greater<Cursor>> heap;
  for (size_t q = 0; q < queues_.size(); ++q) {
    if (!queues_[q].order.empty()) {
      auto it = queues_[q].order.begin();
      heap.push({it->first, static_cast<int>(q), it, 0});
    }
  }
  while (!heap.empty() && cycle.budget > 0) {
    Cursor c = heap.top();
    heap.pop();
    const int64_t id = std::get<2>(c.it->first);
    auto next = std::next(c.it);
    Evaluate(*c.it->second, cycle, result);  // may erase *c.it (admitted), never *next
    // A job parked now does not count against the lookback: the jobs behind it are looked at as
    // if it were not there, in this cycle already.
    int visited = c.visited + 1;
    if (auto it = pending_.find(id); it != pending_.end() && Park(it->second, cycle)) {
      visited = c.visited;
    }
    if (next != queues_[c.queue].order.end() && visited < config_.lookback) {
      heap.push({next->first, c.queue, next, visited});
    }
  }
  ReportPositions(cycle, result);
  return result;
}

}  // namespace trainyard
