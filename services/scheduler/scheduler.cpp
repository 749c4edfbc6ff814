#include "services/scheduler/scheduler.h"

#include <algorithm>
#include <array>
#include <queue>

#include "services/catalog.h"
#include "services/scheduler/verdict_text.h"
#include "services/scheduler/workload_key.h"

namespace trainyard {
namespace {

using CM = ConsumptionModel;
using std::chrono::duration_cast;
using std::chrono::microseconds;

// Below this many active entry slots (a few slabs) compaction is not worth its copies.
constexpr size_t kCompactAtSlots = 4096;

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

// Units freed per pool add up; one entry per pool keeps a plan's extra as small as its pools
// (backfill walks thousands of releases) and its lookups short.
void AddExtra(std::vector<std::pair<int, int64_t>>& extra, int pool, int64_t units) {
  for (auto& [p, u] : extra) {
    if (p == pool) {
      u += units;
      return;
    }
  }
  extra.push_back({pool, units});
}

int64_t TakenIn(const Placement& placement, int pool) {
  int64_t sum = 0;
  for (const PlacedPool& pp : placement.pools) {
    if (pp.pool == pool) sum += pp.units;
  }
  return sum;
}

// Puts `v`'s elements on `to` (an allocator-extended move), unless they are there already.
template <typename PmrVector>
void Rehome(PmrVector& v, std::pmr::memory_resource* to) {
  if (v.get_allocator().resource() == to) return;
  PmrVector moved(std::move(v), to);
  std::destroy_at(&v);
  std::construct_at(&v, std::move(moved));  // a move keeps the allocator
}

}  // namespace

PreemptionCause AdmissionDecision::CauseOf(int64_t victim) const {
  if (std::find(reclaimed.begin(), reclaimed.end(), victim) != reclaimed.end()) {
    return PreemptionCause::kReclaim;
  }
  if (std::find(fair_shared.begin(), fair_shared.end(), victim) != fair_shared.end()) {
    return PreemptionCause::kFairSharing;
  }
  return PreemptionCause::kHigherPriority;
}

std::string AdmissionDecision::VictimMessage(int64_t victim) const {
  const std::string by = "job " + std::to_string(job_id);
  switch (CauseOf(victim)) {
    case PreemptionCause::kReclaim:
      return "borrowed capacity reclaimed by " + by +
             ", whose project is within its cohort share; back in the queue";
    case PreemptionCause::kFairSharing:
      return "preempted by " + by +
             ": this job's project holds more than its fair share of the cohort; back in the queue";
    case PreemptionCause::kHigherPriority:
      break;
  }
  return "preempted by higher-priority " + by + "; back in the queue";
}

// What one cycle remembers: verdicts per shape, holds for starving jobs, victims already claimed.
struct Scheduler::Cycle {
  Timestamp now{};
  double budget = 0;
  std::vector<Hold> holds;
  std::unordered_set<int64_t> claimed;
  int victims_left = 0;
  int reservations_left = 0;
  // Each at most once a cycle; an entry admitted (and erased) since is null.
  std::vector<PendingEntry*> evaluated;
};

Scheduler::Scheduler(const Fleet& fleet, SchedulerConfig config) : fleet_(fleet), config_(config) {
  std::unordered_map<std::string, int> zone_index;
  for (size_t p = 0; p < fleet_.pools.size(); ++p) {
    const CapacityPool& pool = fleet_.pools[p];
    auto [zit, new_zone] = zone_index.try_emplace(pool.zone, static_cast<int>(zone_names_.size()));
    if (new_zone) {
      zone_names_.push_back(pool.zone);
      std::string region = pool.region.empty() ? RegionOfZone(pool.zone) : pool.region;
      auto [rit, new_region] =
          region_index_.try_emplace(region, static_cast<int>(zones_of_region_.size()));
      if (new_region) zones_of_region_.emplace_back();
      zones_of_region_[rit->second].push_back(zit->second);
    }
    zone_of_pool_.push_back(zit->second);
  }
  resource_of_pool_.assign(fleet_.pools.size(), "");
  for (size_t p = 0; p < fleet_.pools.size(); ++p) {
    if (fleet_.pools[p].cohort >= 0) resource_of_pool_[p] = CohortResource(fleet_.pools[p]);
  }
  cohort_usage_.resize(fleet_.cohorts.size());
  for (const Cohort& cohort : fleet_.cohorts) cohort_now_.push_back({&cohort, cohort.capacity});
  for (size_t c = 0; c < fleet_.cohorts.size(); ++c) {
    for (const CohortMember& m : fleet_.cohorts[c].members) {
      cohort_of_project_[m.project] = static_cast<int>(c);
    }
  }
  // Per zone, the pools a machine type can use: its own, then the zone's elastic ones. Types are
  // numbered once (an attached-GPU pool's machine_type, "n1+NVIDIA_TESLA_T4", is its type), and
  // each pending job carries its numbers, so Fit looks pools up without hashing.
  for (const CapacityPool& pool : fleet_.pools) {
    if (!pool.elastic) type_ids_.try_emplace(pool.machine_type, static_cast<int>(type_ids_.size()));
  }
  typed_pools_of_zone_.assign(zone_names_.size(), std::vector<std::vector<int>>(type_ids_.size()));
  elastic_pools_of_zone_.resize(zone_names_.size());
  for (size_t p = 0; p < fleet_.pools.size(); ++p) {
    const CapacityPool& pool = fleet_.pools[p];
    if (pool.elastic) {
      elastic_pools_of_zone_[zone_of_pool_[p]].push_back(static_cast<int>(p));
    } else {
      typed_pools_of_zone_[zone_of_pool_[p]][type_ids_.at(pool.machine_type)].push_back(
          static_cast<int>(p));
    }
  }
  for (size_t z = 0; z < zone_names_.size(); ++z) {
    for (std::vector<int>& pools : typed_pools_of_zone_[z]) {
      pools.insert(pools.end(), elastic_pools_of_zone_[z].begin(), elastic_pools_of_zone_[z].end());
    }
  }
  used_.assign(fleet_.pools.size(), 0);
  down_.assign(fleet_.pools.size(), 0);
}

const std::vector<int>& Scheduler::PoolsFor(int zone, const GangPool& gp) const {
  return gp.type_id < 0 ? elastic_pools_of_zone_[zone] : typed_pools_of_zone_[zone][gp.type_id];
}

int Scheduler::TypeIdOf(const GangPool& gp) const {
  auto it = type_ids_.find(gp.attached == AcceleratorType::kUnspecified
                               ? gp.machine_type
                               : AttachedPoolType(gp.machine_type, gp.attached));
  return it == type_ids_.end() ? -1 : it->second;
}

int Scheduler::QueueFor(const std::string& project_id, const std::string& region) {
  std::string key = project_id + "|" + region;
  auto [it, inserted] = queue_index_.try_emplace(key, static_cast<int>(queues_.size()));
  if (inserted) {
    queues_.emplace_back(active_nodes_.get(), parked_nodes_.get());
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
    if (it->second->job.version >= job.version) return;
    Remove(job.id);
  }
  Remove(job.id);  // a requeued job leaves the running set
  for (GangPool& gp : job.pools) gp.type_id = TypeIdOf(gp);
  for (QuotaDemand& d : job.quota) {
    d.accounts = {AccountOf(job.project_id, d.metric),
                  AccountOf(job.project_id, PreemptibleQuotaMetric(d.metric))};
  }
  PendingEntry entry;
  entry.queue = QueueFor(job.project_id, job.region);
  entry.shape =
      shape_ids_.try_emplace(job.shape, static_cast<int>(shape_ids_.size())).first->second;
  if (job.dws_deadline) dws_deadlines_.insert({*job.dws_deadline, job.id});
  entry.job = std::move(job);
  int64_t id = entry.job.id;
  PendingEntry& stored = *NewEntry(*active_entries_, job_arena_.get(), std::move(entry));
  pending_.emplace(id, &stored);
  Queue& queue = queues_[stored.queue];
  queue.order.insert({KeyOf(stored.job), &stored});
  queue.positions_stale = true;
}

void Scheduler::UpsertRunning(RunningJob job) {
  Remove(job.id);
  int64_t id = job.id;
  RunningJob& stored = running_.emplace(id, std::move(job)).first->second;
  Rehome(stored.placement.pools, running_arena_.get());
  AddUsage(stored, +1);
}

void Scheduler::Remove(int64_t id) {
  if (auto it = pending_.find(id); it != pending_.end()) {
    PendingEntry* entry = it->second;
    Queue& queue = queues_[entry->queue];
    SetOf(queue, entry->parked).erase(KeyOf(entry->job));
    queue.positions_stale = true;
    if (entry->job.dws_deadline) dws_deadlines_.erase({*entry->job.dws_deadline, id});
    if (entry->never_fits_deadline) never_fits_deadlines_.erase({*entry->never_fits_deadline, id});
    pending_.erase(it);
    DeleteEntry(PoolOf(entry->parked), entry);
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

Scheduler::EntryPool& Scheduler::PoolOf(Parked parked) {
  return parked == Parked::kNo ? *active_entries_ : *parked_entries_;
}

std::pmr::memory_resource* Scheduler::ArenaOf(Parked parked) const {
  return parked == Parked::kNo ? job_arena_.get() : parked_arena_.get();
}

Scheduler::PendingEntry* Scheduler::NewEntry(EntryPool& pool, std::pmr::memory_resource* arena,
                                             PendingEntry&& from) {
  auto* entry = new (pool.Allocate()) PendingEntry(std::move(from));
  Rehome(entry->job.pools, arena);
  Rehome(entry->job.quota, arena);
  return entry;
}

void Scheduler::DeleteEntry(EntryPool& pool, PendingEntry* entry) {
  entry->~PendingEntry();
  pool.Deallocate(entry);
}

Scheduler::PendingEntry* Scheduler::MoveEntry(PendingEntry* entry, Parked to) {
  PendingEntry* moved = NewEntry(PoolOf(to), ArenaOf(to), std::move(*entry));
  DeleteEntry(PoolOf(entry->parked), entry);
  moved->parked = to;
  pending_[moved->job.id] = moved;
  return moved;
}

void Scheduler::CompactActive() {
  // In the order a cycle walks them: rank first across all queues (the cursors merge the queues'
  // heads by rank), so that a walk reads ascending addresses, which the hardware prefetches.
  struct Walked {
    RankKey key;
    int queue;
    PendingEntry* entry;
  };
  std::vector<Walked> walk;
  walk.reserve(active_entries_->live());
  for (size_t q = 0; q < queues_.size(); ++q) {
    for (const auto& [key, entry] : queues_[q].order)
      walk.push_back({key, static_cast<int>(q), entry});
  }
  std::sort(walk.begin(), walk.end(),
            [](const Walked& a, const Walked& b) { return a.key < b.key; });
  auto entries = std::make_unique<EntryPool>();
  auto nodes = std::make_unique<NodePool>();
  auto arena = std::make_unique<JobArena>();
  std::vector<OrderedKeys> orders;
  orders.reserve(queues_.size());
  for (size_t q = 0; q < queues_.size(); ++q) {
    orders.emplace_back(OrderedKeys::allocator_type(nodes.get()));
  }
  for (const Walked& w : walk) {
    // The job's strings stay where they are: only what every walk reads moves.
    PendingEntry* moved = NewEntry(*entries, arena.get(), std::move(*w.entry));
    DeleteEntry(*active_entries_, w.entry);
    pending_[moved->job.id] = moved;
    OrderedKeys& order = orders[static_cast<size_t>(w.queue)];
    order.emplace_hint(order.end(), w.key, moved);
  }
  for (size_t q = 0; q < queues_.size(); ++q) {
    queues_[q].order = std::move(orders[q]);  // the old nodes go back to the old pool
  }
  active_entries_ = std::move(entries);
  active_nodes_ = std::move(nodes);
  job_arena_ = std::move(arena);  // nothing is left on the old one
}

void Scheduler::DeleteEntries() {
  for (auto& [id, entry] : pending_) DeleteEntry(PoolOf(entry->parked), entry);
  pending_.clear();
}

Scheduler::~Scheduler() { DeleteEntries(); }

void Scheduler::Clear() {
  DeleteEntries();
  running_.clear();
  dws_deadlines_.clear();
  never_fits_deadlines_.clear();
  quota_freed_.clear();
  queues_.clear();
  active_nodes_ = std::make_unique<NodePool>();
  parked_nodes_ = std::make_unique<NodePool>();
  active_entries_ = std::make_unique<EntryPool>();
  parked_entries_ = std::make_unique<EntryPool>();
  job_arena_ = std::make_unique<JobArena>();
  parked_arena_ = std::make_unique<JobArena>();
  queue_index_.clear();
  shape_ids_.clear();
  shape_verdicts_.clear();
  account_ids_.clear();
  accounts_.clear();
  releases_.clear();
  release_nodes_ = std::make_unique<NodePool>();
  resources_.clear();
  resource_used_.clear();
  for (auto& usage : cohort_usage_) usage.clear();
  std::fill(used_.begin(), used_.end(), 0);
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

void Scheduler::AddUsage(const RunningJob& job, int sign) {
  Releases& releases =
      releases_.try_emplace(job.region, Releases::allocator_type(release_nodes_.get()))
          .first->second;
  for (const PlacedPool& pp : job.placement.pools) {
    const Release release{job.expected_end, job.id, pp.pool, pp.units};
    if (sign > 0) {
      releases.insert(release);
    } else if (auto it = releases.find(release); it != releases.end()) {
      releases.erase(it);
    }
  }
  if (!job.on_resource.empty()) {
    // On a resource's nodes: the resource's own hold already counts the pools and the quota.
    auto& used = resource_used_[job.on_resource];
    for (const PlacedPool& pp : job.placement.pools) used[pp.pool] += sign * pp.units;
    SetRunning(queues_[QueueFor(job.project_id, job.region)], job, sign);
    return;
  }
  for (const PlacedPool& pp : job.placement.pools) {
    used_[pp.pool] += sign * pp.units;
    if (const int c = fleet_.pools[pp.pool].cohort; c >= 0) {
      cohort_usage_[c][resource_of_pool_[pp.pool]][job.project_id] += sign * pp.units;
    }
  }
  for (const QuotaDemand& d : job.quota) {
    accounts_[AccountOf(job.project_id, d.metric)].used += sign * d.amount;
  }
  SetRunning(queues_[QueueFor(job.project_id, job.region)], job, sign);
  if (sign < 0 && !job.quota.empty()) quota_freed_.insert(job.project_id);
}

void Scheduler::SetRunning(Queue& queue, const RunningJob& job, int sign) {
  if (sign > 0) {
    queue.running.push_back({job.priority, &job});  // UpsertRunning removed any earlier one
    return;
  }
  // By address, which reads no job; order does not matter (plans sort their candidates).
  auto it = std::find_if(queue.running.begin(), queue.running.end(),
                         [&](const Queue::RunningRef& r) { return r.job == &job; });
  if (it == queue.running.end()) return;
  *it = queue.running.back();
  queue.running.pop_back();
}

int64_t Scheduler::QuotaUsed(const std::string& project_id, const std::string& metric) const {
  auto it = account_ids_.find(project_id + "|" + metric);
  return it == account_ids_.end() ? 0 : accounts_[static_cast<size_t>(it->second)].used;
}

int Scheduler::AccountOf(const std::string& project_id, const std::string& metric) {
  auto [it, added] =
      account_ids_.try_emplace(project_id + "|" + metric, static_cast<int>(accounts_.size()));
  if (added) accounts_.push_back({fleet_.quotas.Limit(project_id, metric), 0});
  return it->second;
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

int64_t Scheduler::CohortUsage(int cohort, const std::string& resource,
                               const std::string& project) const {
  const auto& by_resource = cohort_usage_[cohort];
  auto r = by_resource.find(resource);
  if (r == by_resource.end()) return 0;
  auto p = r->second.find(project);
  return p == r->second.end() ? 0 : p->second;
}

int64_t Scheduler::Headroom(const std::string& project, int pool, const Extra* extra) const {
  const int c = fleet_.pools[pool].cohort;
  if (c < 0) return kElasticUnits;
  const Cohort& cohort = fleet_.cohorts[c];
  const CohortMember* me = cohort.Member(project);
  if (me == nullptr) return 0;
  const std::string& resource = resource_of_pool_[pool];
  // Units of this resource that planned victims give back.
  int64_t freed = 0;
  if (extra != nullptr) {
    for (const auto& [p, units] : *extra) {
      if (fleet_.pools[p].cohort == c && resource_of_pool_[p] == resource) freed += units;
    }
  }
  int64_t used = -freed;
  int64_t kept_by_others = 0;  // nominal the others do not lend and do not use
  for (const CohortMember& m : cohort.members) {
    const int64_t u = CohortUsage(c, resource, m.project);
    used += u;
    if (&m == me) continue;
    auto lend = m.lending_limit.find(resource);
    if (lend == m.lending_limit.end()) continue;
    kept_by_others += std::max<int64_t>(0, cohort_now_[c].Nominal(m, resource) - lend->second - u);
  }
  int64_t room = cohort_now_[c].Capacity(resource) - used - kept_by_others;
  if (auto limit = me->borrowing_limit.find(resource); limit != me->borrowing_limit.end()) {
    const int64_t mine = CohortUsage(c, resource, project) - std::max<int64_t>(0, freed);
    room = std::min(
        room, cohort_now_[c].Nominal(*me, resource) + limit->second - std::max<int64_t>(0, mine));
  }
  return room;
}

bool Scheduler::Borrowing(const RunningJob& job) const {
  for (const PlacedPool& pp : job.placement.pools) {
    const int c = fleet_.pools[pp.pool].cohort;
    if (c < 0) continue;
    const CohortMember* m = fleet_.cohorts[c].Member(job.project_id);
    if (m == nullptr) continue;
    const std::string& resource = resource_of_pool_[pp.pool];
    if (CohortUsage(c, resource, job.project_id) > cohort_now_[c].Nominal(*m, resource)) {
      return true;
    }
  }
  return false;
}

bool Scheduler::MayReclaim(const SchedulerJob& job,
                           const std::vector<ConsumptionModel>& models) const {
  auto c = cohort_of_project_.find(job.project_id);
  if (c == cohort_of_project_.end()) return false;
  const Cohort& cohort = fleet_.cohorts[c->second];
  const CohortMember* me = cohort.Member(job.project_id);
  for (const GangPool& gp : job.pools) {
    for (ConsumptionModel m : models) {
      const std::string resource = CohortResource(gp.machine_type, m);
      if (me->nominal.count(resource) == 0) continue;
      if (CohortUsage(c->second, resource, job.project_id) + gp.units <=
          cohort_now_[c->second].Nominal(*me, resource)) {
        return true;
      }
    }
  }
  return false;
}

Scheduler::FairKey Scheduler::FairKeyOf(const SchedulerJob& job) const {
  FairKey key;
  if (cohort_of_project_.empty()) return key;
  auto c = cohort_of_project_.find(job.project_id);
  if (c == cohort_of_project_.end()) return key;
  const Cohort& cohort = fleet_.cohorts[c->second];
  const CohortMember* me = cohort.Member(job.project_id);
  for (const GangPool& gp : job.pools) {
    for (ConsumptionModel m : FlavorOrder(job)) {
      const std::string resource = CohortResource(gp.machine_type, m);
      const Cohort::Now& now = cohort_now_[c->second];
      const int64_t capacity = now.Capacity(resource);
      if (capacity <= 0) continue;
      const int64_t over =
          CohortUsage(c->second, resource, job.project_id) + gp.units - now.Nominal(*me, resource);
      if (over <= 0) continue;
      key.borrowing = true;
      key.drs =
          std::max(key.drs, static_cast<double>(over) / static_cast<double>(capacity) / me->weight);
    }
  }
  return key;
}

double Scheduler::Drs(int cohort, const std::string& project, const UnitsByResource* less) const {
  const Cohort& c = fleet_.cohorts[cohort];
  const CohortMember* me = c.Member(project);
  if (me == nullptr) return 0;
  double share = 0;
  for (const auto& [resource, capacity] : cohort_now_[cohort].capacity) {
    if (capacity <= 0) continue;
    int64_t used = CohortUsage(cohort, resource, project);
    if (less != nullptr) {
      if (auto it = less->find(resource); it != less->end()) used -= it->second;
    }
    const int64_t over = used - cohort_now_[cohort].Nominal(*me, resource);
    if (over > 0) {
      share =
          std::max(share, static_cast<double>(over) / static_cast<double>(capacity) / me->weight);
    }
  }
  return share;
}

bool Scheduler::FairShareAllows(const SchedulerJob& job, const RunningJob& victim,
                                const std::map<std::string, UnitsByResource>& taken) const {
  const int cohort = cohort_of_project_.at(job.project_id);
  const double mine = std::max(Drs(cohort, job.project_id), FairKeyOf(job).drs);
  UnitsByResource before;
  if (auto it = taken.find(victim.project_id); it != taken.end()) before = it->second;
  UnitsByResource after = before;
  for (const PlacedPool& pp : victim.placement.pools) {
    if (!resource_of_pool_[pp.pool].empty()) after[resource_of_pool_[pp.pool]] += pp.units;
  }
  return mine <= Drs(cohort, victim.project_id, &after) ||
         mine < Drs(cohort, victim.project_id, &before);
}

// Why a member of a full cohort waits: over its fair share, or under it while the work that
// exceeds it is too new to stop.
std::string Scheduler::FairShareText(const SchedulerJob& job, int cohort) const {
  const double mine = std::max(Drs(cohort, job.project_id), FairKeyOf(job).drs);
  std::string top;
  double top_share = -1;
  for (const CohortMember& m : fleet_.cohorts[cohort].members) {
    if (m.project == job.project_id) continue;
    if (const double d = Drs(cohort, m.project); d > top_share) {
      top_share = d;
      top = m.project;
    }
  }
  return FairShareMessage(job.project_id, mine, top, top_share, config_.preemption_exemption);
}

std::optional<Verdict> Scheduler::CheckQuota(const SchedulerJob& job, Cycle&,
                                             std::vector<ConsumptionModel>& models) const {
  std::vector<ConsumptionModel> fitting;
  std::optional<Verdict> first_block;
  bool all_never = true;
  for (ConsumptionModel m : models) {
    std::optional<Verdict> block;
    for (const QuotaDemand& d : job.quota) {
      const QuotaAccount& account =
          accounts_[static_cast<size_t>(d.accounts[UsesPreemptibleQuota(m) ? 1 : 0])];
      if (!account.limit) continue;
      const int64_t limit = *account.limit;
      if (d.amount > limit) {
        block = Verdict{ReasonCode::kNeverFits,
                        NeverFitsQuotaMessage(QuotaMetricFor(d.metric, m), d.amount, limit)};
        break;
      }
      if (account.used + d.amount > limit) {
        block = Verdict{ReasonCode::kQuotaExceeded,
                        QuotaMessage(QuotaMetricFor(d.metric, m), account.used, limit, d.amount)};
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

std::optional<std::string> Scheduler::QuotaBlock(const std::string& project_id,
                                                 const std::vector<QuotaDemand>& more) const {
  for (const QuotaDemand& d : more) {
    std::optional<int64_t> limit = fleet_.quotas.Limit(project_id, d.metric);
    if (!limit || d.amount <= 0) continue;
    const int64_t used = QuotaUsed(project_id, d.metric);
    if (used + d.amount > *limit) return QuotaMessage(d.metric, used, *limit, d.amount);
  }
  return std::nullopt;
}

std::optional<Scheduler::PreemptionPlan> Scheduler::PlanPreemption(
    const SchedulerJob& job, int queue, Cycle& cycle,
    const std::vector<ConsumptionModel>& models) const {
  // Candidates: lower-priority admitted jobs of the same queue (Kueue's withinClusterQueue:
  // LowerPriority), never DWS work, which runs to its end once provisioned; and the work other
  // cohort members run on borrowed capacity, whatever its priority, once it has run the
  // exemption: all of it for a member still within its nominal share (Kueue's
  // reclaimWithinCohort), and otherwise what fair sharing allows — never an owner's share.
  std::unordered_map<std::string, std::vector<const RunningJob*>> by_zone;
  auto consider = [&](const RunningJob& r) {
    // A persistent resource's hold, and the jobs on its nodes, are never victims.
    if (cycle.claimed.count(r.id) > 0 || IsHoldKey(r.id) || !r.on_resource.empty()) return;
    bool dws = false;
    for (const PlacedPool& pp : r.placement.pools) {
      dws = dws || fleet_.pools[pp.pool].model == CM::kFlexStart;
    }
    if (!dws) by_zone[r.placement.zone].push_back(&r);
  };
  for (const Queue::RunningRef& r : queues_[static_cast<size_t>(queue)].running) {
    if (r.priority < job.priority) consider(*r.job);
  }
  std::unordered_set<int64_t> borrowers;        // reclaimed whatever fair sharing says
  std::unordered_map<std::string, double> drs;  // of the projects whose borrowers are candidates
  bool reclaim = false;
  if (auto c = cohort_of_project_.find(job.project_id); c != cohort_of_project_.end()) {
    reclaim = MayReclaim(job, models);
    const Timestamp exempt_since =
        cycle.now - duration_cast<microseconds>(config_.preemption_exemption);
    for (const auto& [id, r] : running_) {
      auto rc = cohort_of_project_.find(r.project_id);
      if (r.project_id == job.project_id || rc == cohort_of_project_.end() ||
          rc->second != c->second || r.admitted_at > exempt_since || !Borrowing(r)) {
        continue;
      }
      if (reclaim) borrowers.insert(id);
      drs.try_emplace(r.project_id, Drs(c->second, r.project_id));
      consider(r);
    }
  }
  auto other_borrower = [&](const RunningJob* r) { return drs.count(r->project_id) > 0; };
  std::optional<PreemptionPlan> best;
  for (auto& [zone, candidates] : by_zone) {
    // Other members' borrowed work first, the largest share's first, then the lowest priority,
    // then the newest admitted (least work lost).
    std::sort(candidates.begin(), candidates.end(), [&](const RunningJob* a, const RunningJob* b) {
      const bool ba = other_borrower(a), bb = other_borrower(b);
      if (ba != bb) return ba;
      if (ba && drs.at(a->project_id) != drs.at(b->project_id)) {
        return drs.at(a->project_id) > drs.at(b->project_id);
      }
      if (a->priority != b->priority) return a->priority < b->priority;
      if (a->admitted_at != b->admitted_at) return a->admitted_at > b->admitted_at;
      return a->id > b->id;
    });
    int zone_index = zone_of_pool_[candidates[0]->placement.pools[0].pool];
    // When every candidate together cannot make room, no subset can (a fit only gains from more
    // units): one fit says so, instead of one per candidate, which is how most plans end in a
    // full fleet.
    Extra all;
    for (const RunningJob* c : candidates) {
      for (const PlacedPool& pp : c->placement.pools) AddExtra(all, pp.pool, pp.units);
    }
    if (!Fit(job, cycle, &all, zone_index, true, models, /*explain=*/false).fits) continue;
    Extra extra;
    std::vector<const RunningJob*> victims;
    std::unordered_set<int64_t> fair_shared;
    std::map<std::string, UnitsByResource> taken;  // project → what its victims give back
    FitOutcome fit;
    for (const RunningJob* c : candidates) {
      // Removing victims only lowers their project's share: each is judged after the ones before.
      if (other_borrower(c) && !reclaim) {
        if (!FairShareAllows(job, *c, taken)) continue;
        fair_shared.insert(c->id);
      }
      for (const PlacedPool& pp : c->placement.pools) {
        AddExtra(extra, pp.pool, pp.units);
        if (!resource_of_pool_[pp.pool].empty()) {
          taken[c->project_id][resource_of_pool_[pp.pool]] += pp.units;
        }
      }
      victims.push_back(c);
      fit = Fit(job, cycle, &extra, zone_index, true, models, /*explain=*/false);
      if (fit.fits) break;
    }
    if (!fit.fits) continue;
    // Give back, newest pick first, every victim the fit does not need (its project then keeps
    // more, so the fair-sharing judgement of the others still holds).
    for (size_t i = victims.size(); i-- > 0;) {
      Extra without = extra;
      for (const PlacedPool& pp : victims[i]->placement.pools) {
        AddExtra(without, pp.pool, -pp.units);
      }
      FitOutcome again = Fit(job, cycle, &without, zone_index, true, models, /*explain=*/false);
      if (again.fits) {
        extra = std::move(without);
        fit = std::move(again);
        victims.erase(victims.begin() + static_cast<long>(i));
      }
    }
    if (static_cast<int>(victims.size()) > cycle.victims_left) continue;
    if (!best || victims.size() < best->victims.size()) {
      best.emplace();
      for (const RunningJob* v : victims) {
        best->victims.push_back(v->id);
        if (borrowers.count(v->id) > 0) best->reclaimed.push_back(v->id);
        if (fair_shared.count(v->id) > 0) best->fair_shared.push_back(v->id);
      }
      best->placement = fit.placement;
    }
  }
  return best;
}

void Scheduler::ReserveCapacity(const SchedulerJob& job, Cycle& cycle,
                                const std::vector<ConsumptionModel>& models,
                                Verdict& verdict) const {
  // Slurm-style backfill on counts: walk running jobs' expected ends and book the first time the
  // gang fits.
  auto found = releases_.find(job.region);
  if (found == releases_.end()) return;
  const Releases& releases = found->second;
  const Timestamp horizon = cycle.now + duration_cast<microseconds>(config_.backfill_horizon);
  auto within = [&](Releases::const_iterator it) {
    return it != releases.end() && std::get<0>(*it) <= horizon;
  };
  Extra extra;
  for (auto it = releases.begin(); within(it);) {
    // Releases already due count as now.
    const Timestamp t = std::max(std::get<0>(*it), cycle.now);
    for (; within(it) && std::max(std::get<0>(*it), cycle.now) == t; ++it) {
      AddExtra(extra, std::get<2>(*it), std::get<3>(*it));
    }
    FitOutcome fit = Fit(job, cycle, &extra, -1, false, models, /*explain=*/false);
    if (!fit.fits) continue;
    Hold hold;
    hold.job_id = job.id;
    hold.priority = job.priority;
    hold.start = t;
    for (const PlacedPool& pp : fit.placement.pools) {
      const int64_t slack = Available(pp.pool, cycle.now) + ExtraFor(&extra, pp.pool) -
                            TakenIn(fit.placement, pp.pool);
      if (int64_t* s = hold.SlackOf(pp.pool)) {
        *s = slack;
      } else {
        hold.slack.push_back({pp.pool, slack});
      }
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
      if (int64_t* s = h.SlackOf(pp.pool)) *s -= pp.units;
    }
  }
  if (IsHoldKey(job.id)) {
    result.holds.push_back(
        HoldDecision{ResourceUidOfHoldKey(job.id), job.version, placement, job.image_uri});
  } else {
    AdmissionDecision decision;
    decision.job_id = job.id;
    decision.version = job.version;
    decision.placement = placement;
    decision.image_uri = job.image_uri;
    decision.message = AdmittedMessage(fleet_, placement);
    if (auto held = job.on_resource.empty() ? resources_.end() : resources_.find(job.on_resource);
        held != resources_.end()) {
      decision.resource_uid = held->second.uid;
    }
    decision.victims = std::move(victims);
    result.admissions.push_back(std::move(decision));
  }
  entry.admitted = true;
  // The entry was the last evaluated; it goes now.
  if (!cycle.evaluated.empty() && cycle.evaluated.back() == &entry)
    cycle.evaluated.back() = nullptr;
  UpsertRunning(std::move(r));  // also removes the pending entry
}

void Scheduler::Evaluate(PendingEntry& entry, Cycle& cycle, CycleResult& result) {
  const SchedulerJob& job = entry.job;
  cycle.evaluated.push_back(&entry);
  entry.evaluated_in = cycles_;
  const bool flex = job.strategy == SchedulingStrategy::kFlexStart;
  const bool eligible = !flex && (job.priority >= config_.reserve_min_priority ||
                                  cycle.now - job.queue_time >=
                                      duration_cast<microseconds>(config_.reserve_min_wait));
  const int64_t shape_key = int64_t{entry.shape} * 2 + (eligible ? 1 : 0);
  // A job that may hold capacity is its own case; once the cycle has made all the holds it may,
  // an eligible job's verdict is its shape's as much as any other's.
  const bool may_hold = eligible && cycle.reservations_left > 0;
  if (!may_hold) {
    if (const Verdict* cached = ShapeVerdict(shape_key)) {
      entry.verdict.code = cached->code;
      entry.verdict.message = cached->message;
      cycle.budget -= 0.05;
      ++result.reused;
      return;
    }
  }
  cycle.budget -= 1;
  ++result.evaluations;

  if (!job.on_resource.empty()) {
    FitOutcome fit = FitOnResource(job);
    if (fit.fits) {
      Admit(entry, fit.placement, {}, cycle, result);
      return;
    }
    entry.verdict.code = fit.code;
    entry.verdict.message = fit.message;
    return;
  }
  std::vector<ConsumptionModel> models = FlavorOrder(job);
  if (std::optional<Verdict> blocked = CheckQuota(job, cycle, models)) {
    entry.verdict.code = blocked->code;
    entry.verdict.message = blocked->message;
    RememberShapeVerdict(shape_key, entry.verdict);
    return;
  }
  FitOutcome fit = Fit(job, cycle, nullptr, -1, true, models, /*explain=*/true);
  if (fit.fits) {
    Admit(entry, fit.placement, {}, cycle, result);
    return;
  }
  // A persistent resource's hold takes only free capacity: creating one never stops a job.
  if (fit.code != ReasonCode::kNeverFits && !flex && !IsHoldKey(job.id) && cycle.victims_left > 0) {
    if (std::optional<PreemptionPlan> plan = PlanPreemption(job, entry.queue, cycle, models)) {
      Admit(entry, plan->placement, std::move(plan->victims), cycle, result);
      result.admissions.back().reclaimed = std::move(plan->reclaimed);
      result.admissions.back().fair_shared = std::move(plan->fair_shared);
      result.admissions.back().message += PreemptedSuffix(
          result.admissions.back().victims.size(), result.admissions.back().reclaimed.size(),
          result.admissions.back().fair_shared.size());
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
  if (!may_hold) RememberShapeVerdict(shape_key, entry.verdict);
}

const Verdict* Scheduler::ShapeVerdict(int64_t shape_key) const {
  if (shape_key >= static_cast<int64_t>(shape_verdicts_.size())) return nullptr;
  const auto& [cycle, verdict] = shape_verdicts_[static_cast<size_t>(shape_key)];
  return cycle == cycles_ ? &verdict : nullptr;
}

void Scheduler::RememberShapeVerdict(int64_t shape_key, Verdict& verdict) {
  verdict.message = messages_.Intern(verdict.message);
  if (shape_key >= static_cast<int64_t>(shape_verdicts_.size())) {
    shape_verdicts_.resize(
        std::max<size_t>(static_cast<size_t>(shape_key) + 1, shape_ids_.size() * 2));
  }
  shape_verdicts_[static_cast<size_t>(shape_key)] = {cycles_, verdict};
}

bool Scheduler::Park(PendingEntry& entry, Cycle& cycle) {
  if (entry.parked != Parked::kNo) return false;
  Parked to = Parked::kNo;
  if (entry.verdict.code == ReasonCode::kNeverFits) to = Parked::kUntilFleetChanges;
  if (entry.verdict.code == ReasonCode::kQuotaExceeded) to = Parked::kUntilQuotaFrees;
  if (to == Parked::kNo) return false;
  Queue& queue = queues_[entry.queue];
  const RankKey key = KeyOf(entry.job);
  queue.order.erase(key);
  PendingEntry* const was = &entry;  // gone after the move
  PendingEntry* parked = MoveEntry(was, to);
  SetOf(queue, to).insert({key, parked});
  if (!cycle.evaluated.empty() && cycle.evaluated.back() == was) cycle.evaluated.back() = parked;
  const Duration timeout = fleet_.never_fits_timeout;
  if (to == Parked::kUntilFleetChanges && timeout > Duration{}) {
    // From when this fleet could first have said so: a job queued before a restart (perhaps on
    // another fleet) gets the whole wait again.
    const Timestamp from = std::max(parked->job.queue_time, first_cycle_.value_or(cycle.now));
    parked->never_fits_deadline = from + duration_cast<microseconds>(timeout);
    never_fits_deadlines_.insert({*parked->never_fits_deadline, parked->job.id});
  }
  return true;
}

void Scheduler::UnparkQuotaWaiters() {
  if (quota_freed_.empty()) return;
  for (Queue& queue : queues_) {
    if (queue.quota_parked.empty() || quota_freed_.count(queue.project_id) == 0) continue;
    for (const auto& [key, entry] : queue.quota_parked) {
      PendingEntry* active = MoveEntry(entry, Parked::kNo);
      queue.order.insert({key, active});
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
  Verdict& v = entry.verdict;  // compared in place: most verdicts are as last reported
  v.position = shown;
  if (!evaluated && v.code == ReasonCode::kNotEvaluated) {
    v.message = NotEvaluatedMessage(v.position, config_.lookback);
  }
  // Interned only to compare with what was reported (a first report has nothing to compare
  // with, and most verdicts come interned already, from their shape's).
  if (entry.reported && !v.message.SharesWith(entry.reported->message)) {
    v.message = messages_.Intern(v.message);
  }
  if (entry.reported && *entry.reported == v) {
    // Equal, but read to tell (it was reported before the interner held its text): share it.
    entry.reported->message = v.message;
    return;
  }
  const bool code_changed = !entry.reported || entry.reported->code != v.code;
  entry.reported = v;
  if (IsHoldKey(entry.job.id)) {
    result.hold_verdicts.push_back({ResourceUidOfHoldKey(entry.job.id), v});
  } else {
    result.verdicts.push_back({entry.job.id, entry.job.version, v, code_changed});
  }
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
  for (PendingEntry* entry : cycle.evaluated) {
    if (entry == nullptr || walked[entry->queue]) continue;
    Report(*entry, entry->reported ? entry->reported->position : 0, result);
  }
}

void Scheduler::Fail(const PendingEntry& entry, std::string message, CycleResult& result) {
  if (IsHoldKey(entry.job.id)) {
    result.hold_failures.push_back(
        {ResourceUidOfHoldKey(entry.job.id), entry.job.version, std::move(message)});
  } else {
    result.failures.push_back({entry.job.id, entry.job.version, std::move(message)});
  }
}

CycleResult Scheduler::RunCycle(Timestamp now) {
  CycleResult result;
  Cycle cycle;
  // The evaluated list of the last cycle lends this one its capacity: growing it anew each cycle
  // costs large allocations, which a heap fragmented by a deep queue makes slow.
  cycle.evaluated = std::move(evaluated_scratch_);
  cycle.evaluated.clear();
  cycle.holds.reserve(static_cast<size_t>(std::max(0, config_.max_reservations)));
  cycle.now = now;
  cycle.budget = config_.evaluation_budget;
  cycle.victims_left = config_.max_victims;
  cycle.reservations_left = config_.max_reservations;

  if (!first_cycle_) first_cycle_ = now;
  for (size_t c = 0; c < fleet_.cohorts.size(); ++c) {
    cohort_now_[c] = fleet_.cohorts[c].At(fleet_.pools, now, fleet_.epoch);
  }
  ++cycles_;
  messages_.Age();
  resource_shortfall_.clear();
  UnparkQuotaWaiters();

  // DWS requests that waited their maxWaitDuration fail (Vertex: FLEX_START, default 24h).
  while (!dws_deadlines_.empty() && dws_deadlines_.begin()->first <= now) {
    int64_t id = dws_deadlines_.begin()->second;
    const PendingEntry& entry = *pending_.at(id);
    Fail(entry, DwsTimeoutMessage(entry.job), result);
    Remove(id);
  }
  // So do jobs that can never fit this fleet once it has not changed for the fleet's
  // neverFitsTimeout (like a Vertex stockout).
  while (!never_fits_deadlines_.empty() && never_fits_deadlines_.begin()->first <= now) {
    int64_t id = never_fits_deadlines_.begin()->second;
    const PendingEntry& entry = *pending_.at(id);
    Fail(entry, NeverFitsTimeoutMessage(entry.verdict.message, fleet_.never_fits_timeout), result);
    Remove(id);
  }

  // One cursor per queue, best head first (scheduler-design.md §3, refill with budget E).
  // Heads are ordered by fair share first (cohort members that would borrow after those that
  // would not, then the lowest share), then by rank.
  struct Cursor {
    FairKey fair;
    RankKey key;
    int queue;
    OrderedKeys::iterator it;
    int visited;
    bool operator>(const Cursor& other) const {
      return std::tie(fair, key) > std::tie(other.fair, other.key);
    }
  };
  std::vector<Cursor> cursors;
  cursors.reserve(queues_.size());
  std::priority_queue<Cursor, std::vector<Cursor>, std::greater<Cursor>> heap(
      std::greater<Cursor>{}, std::move(cursors));
  for (size_t q = 0; q < queues_.size(); ++q) {
    if (!queues_[q].order.empty()) {
      auto it = queues_[q].order.begin();
      heap.push({FairKeyOf(it->second->job), it->first, static_cast<int>(q), it, 0});
    }
  }
  while (!heap.empty() && cycle.budget > 0) {
    Cursor c = heap.top();
    heap.pop();
    // Keys are lazy: an admission since this head was pushed may have raised its project's share;
    // then it goes back to wait behind whoever is now ahead.
    if (FairKey now_key = FairKeyOf(c.it->second->job); now_key != c.fair) {
      c.fair = now_key;
      if (!heap.empty() && c > heap.top()) {
        heap.push(c);
        continue;
      }
    }
    PendingEntry& entry = *c.it->second;
    auto next = std::next(c.it);
    const size_t admissions = result.admissions.size();
    Evaluate(entry, cycle, result);  // may erase *c.it and the entry (admitted), never *next
    const bool admitted = result.admissions.size() > admissions;
    // A job parked now does not count against the lookback: the jobs behind it are looked at as
    // if it were not there, in this cycle already.
    int visited = c.visited + 1;
    if (!admitted && Park(entry, cycle)) visited = c.visited;
    if (next != queues_[c.queue].order.end() && visited < config_.lookback) {
      heap.push({FairKeyOf(next->second->job), next->first, c.queue, next, visited});
    }
  }
  ReportPositions(cycle, result);
  evaluated_scratch_ = std::move(cycle.evaluated);
  if (active_entries_->slots() >= kCompactAtSlots &&
      active_entries_->live() * 2 < active_entries_->slots()) {
    CompactActive();
  }
  return result;
}

}  // namespace trainyard
