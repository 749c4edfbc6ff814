#include "services/scheduler/capacity_snapshot.h"

#include <algorithm>
#include <optional>

#include "services/scheduler/flavor_assigner.h"
#include "services/scheduler/verdict_text.h"

namespace trainyard {

void AddFreed(FreedUnits& freed, int pool, int64_t units) {
  for (auto& [p, u] : freed) {
    if (p == pool) {
      u += units;
      return;
    }
  }
  freed.push_back({pool, units});
}

int64_t FreedIn(std::span<const PoolUnits> freed, int pool) {
  int64_t sum = 0;
  for (const auto& [p, units] : freed) {
    if (p == pool) sum += units;
  }
  return sum;
}

CapacitySnapshot::CapacitySnapshot(const Fleet& fleet, const FleetIndex& index)
    : fleet_(fleet), index_(index) {
  cohort_usage_.resize(fleet_.cohorts.size());
  for (const Cohort& cohort : fleet_.cohorts) cohort_now_.push_back({&cohort, cohort.capacity});
  used_.assign(fleet_.pools.size(), 0);
  down_.assign(fleet_.pools.size(), 0);
  for (const CapacityPool& pool : fleet_.pools) {
    offered_now_.push_back(pool.UnitsAvailableAt(now_, fleet_.epoch));
  }
  block_used_.resize(fleet_.pools.size());
  for (size_t p = 0; p < fleet_.pools.size(); ++p) {
    const int64_t per_block = BlockUnits(static_cast<int>(p));
    if (per_block > 0) {
      block_used_[p].assign(
          static_cast<size_t>((fleet_.pools[p].units + per_block - 1) / per_block), 0);
    }
  }
}

int64_t CapacitySnapshot::BlockUnits(int pool) const {
  const CapacityPool& p = fleet_.pools[pool];
  if (p.elastic || p.block_nodes <= 0) return 0;
  return std::max(1, p.block_nodes / std::max(1, p.hosts_per_unit));
}

namespace {

// Free units in each block of a pool: its size (the last may be short), less what admitted jobs
// and the placement being built hold there.
std::vector<int64_t> FreeInBlocks(const std::vector<int64_t>& used, int64_t per_block,
                                  int64_t pool_units, int pool, const Placement& taken) {
  std::vector<int64_t> free(used.size());
  for (size_t b = 0; b < used.size(); ++b) {
    const int64_t size =
        std::min<int64_t>(per_block, pool_units - static_cast<int64_t>(b) * per_block);
    free[b] = size - used[b];
  }
  for (const PlacedPool& pp : taken.pools) {
    if (pp.pool != pool) continue;
    for (const auto& [b, u] : pp.block_units) {
      if (b >= 0 && static_cast<size_t>(b) < free.size()) free[b] -= u;
    }
  }
  return free;
}

}  // namespace

std::vector<std::pair<int, int64_t>> CapacitySnapshot::ChooseBlocks(int pool, int64_t units,
                                                                    const Placement& taken) const {
  std::vector<std::pair<int, int64_t>> out;
  const int64_t per_block = BlockUnits(pool);
  if (per_block <= 0 || units <= 0) return out;
  const std::vector<int64_t> free =
      FreeInBlocks(block_used_[pool], per_block, fleet_.pools[pool].units, pool, taken);
  std::optional<size_t> tightest;
  for (size_t b = 0; b < free.size(); ++b) {
    if (free[b] >= units && (!tightest || free[b] < free[*tightest])) tightest = b;
  }
  if (tightest) return {{static_cast<int>(*tightest), units}};
  std::vector<size_t> order(free.size());
  for (size_t b = 0; b < order.size(); ++b) order[b] = b;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return free[a] > free[b]; });
  int64_t left = units;
  for (size_t b : order) {
    if (left <= 0 || free[b] <= 0) break;
    const int64_t take = std::min(left, free[b]);
    out.push_back({static_cast<int>(b), take});
    left -= take;
  }
  return out;
}

int CapacitySnapshot::BlocksFor(int pool, int64_t units, const Placement& taken) const {
  if (BlockUnits(pool) <= 0) return 0;
  return static_cast<int>(ChooseBlocks(pool, units, taken).size());
}

void CapacitySnapshot::Refresh(Timestamp now) {
  now_ = now;
  for (size_t p = 0; p < fleet_.pools.size(); ++p) {
    offered_now_[p] = fleet_.pools[p].UnitsAvailableAt(now, fleet_.epoch);
  }
  for (size_t c = 0; c < fleet_.cohorts.size(); ++c) {
    cohort_now_[c] = fleet_.cohorts[c].At(fleet_.pools, now, fleet_.epoch);
  }
}

void CapacitySnapshot::Clear() {
  account_ids_.clear();
  accounts_.clear();
  for (auto& usage : cohort_usage_) usage.clear();
  std::fill(used_.begin(), used_.end(), 0);
  for (auto& blocks : block_used_) std::fill(blocks.begin(), blocks.end(), 0);
}

bool CapacitySnapshot::SetUnitsDown(int pool, int64_t units) {
  if (pool < 0 || pool >= static_cast<int>(down_.size()) || down_[pool] == units) return false;
  down_[pool] = units;
  return true;
}

void CapacitySnapshot::AddPlacement(const Placement& placement, int sign) {
  for (const PlacedPool& pp : placement.pools) {
    used_[pp.pool] += sign * pp.units;
    std::vector<int64_t>& blocks = block_used_[pp.pool];
    for (const auto& [b, u] : pp.block_units) {
      if (b >= 0 && static_cast<size_t>(b) < blocks.size()) blocks[b] += sign * u;
    }
  }
}

void CapacitySnapshot::AddShare(const RunningJob& job, int sign) {
  for (const PlacedPool& pp : job.placement.pools) {
    if (const int c = fleet_.pools[pp.pool].cohort; c >= 0) {
      cohort_usage_[c][index_.resource_of_pool[pp.pool]][job.project_id] += sign * pp.units;
    }
  }
  for (const QuotaDemand& d : job.quota) {
    accounts_[AccountOf(job.project_id, d.metric)].used += sign * d.amount;
  }
}

int64_t CapacitySnapshot::QuotaUsed(const std::string& project_id,
                                    const std::string& metric) const {
  auto it = account_ids_.find(project_id + "|" + metric);
  return it == account_ids_.end() ? 0 : accounts_[static_cast<size_t>(it->second)].used;
}

int CapacitySnapshot::AccountOf(const std::string& project_id, const std::string& metric) {
  auto [it, added] =
      account_ids_.try_emplace(project_id + "|" + metric, static_cast<int>(accounts_.size()));
  if (added) accounts_.push_back({fleet_.quotas.Limit(project_id, metric), 0});
  return it->second;
}

std::optional<Verdict> CapacitySnapshot::CheckQuota(const SchedulerJob& job,
                                                    std::vector<ConsumptionModel>& models) const {
  // Narrowed in place (each evaluation asks; a new vector cost it a malloc): the first `kept`
  // are those allowed, and `models` stays as it was when none is.
  size_t kept = 0;
  std::optional<Verdict> first_block;
  bool all_never = true;
  for (size_t i = 0; i < models.size(); ++i) {
    const ConsumptionModel m = models[i];
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
      models[kept++] = m;
    } else if (!first_block) {
      first_block = block;
    }
  }
  if (kept > 0) {
    models.resize(kept);
    return std::nullopt;
  }
  if (!all_never && first_block->code == ReasonCode::kNeverFits) {
    first_block->code = ReasonCode::kQuotaExceeded;
  }
  return first_block;
}

std::optional<std::string> CapacitySnapshot::QuotaBlock(
    const std::string& project_id, const std::vector<QuotaDemand>& more) const {
  for (const QuotaDemand& d : more) {
    std::optional<int64_t> limit = fleet_.quotas.Limit(project_id, d.metric);
    if (!limit || d.amount <= 0) continue;
    const int64_t used = QuotaUsed(project_id, d.metric);
    if (used + d.amount > *limit) return QuotaMessage(d.metric, used, *limit, d.amount);
  }
  return std::nullopt;
}

int64_t CapacitySnapshot::CohortUsage(int cohort, const std::string& resource,
                                      const std::string& project) const {
  const auto& by_resource = cohort_usage_[cohort];
  auto r = by_resource.find(resource);
  if (r == by_resource.end()) return 0;
  auto p = r->second.find(project);
  return p == r->second.end() ? 0 : p->second;
}

int64_t CapacitySnapshot::Headroom(const std::string& project, int pool,
                                   std::span<const PoolUnits> freed_units) const {
  const int c = fleet_.pools[pool].cohort;
  if (c < 0) return kElasticUnits;
  const Cohort& cohort = fleet_.cohorts[c];
  const CohortMember* me = cohort.Member(project);
  if (me == nullptr) return 0;
  const std::string& resource = index_.resource_of_pool[pool];
  // Units of this resource that planned victims give back.
  int64_t freed = 0;
  for (const auto& [p, units] : freed_units) {
    if (fleet_.pools[p].cohort == c && index_.resource_of_pool[p] == resource) freed += units;
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
bool CapacitySnapshot::Borrowing(const RunningJob& job) const {
  for (const PlacedPool& pp : job.placement.pools) {
    const int c = fleet_.pools[pp.pool].cohort;
    if (c < 0) continue;
    const CohortMember* m = fleet_.cohorts[c].Member(job.project_id);
    if (m == nullptr) continue;
    const std::string& resource = index_.resource_of_pool[pp.pool];
    if (CohortUsage(c, resource, job.project_id) > cohort_now_[c].Nominal(*m, resource)) {
      return true;
    }
  }
  return false;
}

bool CapacitySnapshot::MayReclaim(const SchedulerJob& job,
                                  const std::vector<ConsumptionModel>& models) const {
  auto c = index_.cohort_of_project.find(job.project_id);
  if (c == index_.cohort_of_project.end()) return false;
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

FairKey CapacitySnapshot::FairKeyOf(const SchedulerJob& job) const {
  FairKey key;
  if (index_.cohort_of_project.empty()) return key;
  auto c = index_.cohort_of_project.find(job.project_id);
  if (c == index_.cohort_of_project.end()) return key;
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

double CapacitySnapshot::Drs(int cohort, const std::string& project,
                             const UnitsByResource* less) const {
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

bool CapacitySnapshot::FairShareAllows(const SchedulerJob& job, const RunningJob& victim,
                                       const std::map<std::string, UnitsByResource>& taken) const {
  const int cohort = index_.cohort_of_project.at(job.project_id);
  const double mine = std::max(Drs(cohort, job.project_id), FairKeyOf(job).drs);
  UnitsByResource before;
  if (auto it = taken.find(victim.project_id); it != taken.end()) before = it->second;
  UnitsByResource after = before;
  for (const PlacedPool& pp : victim.placement.pools) {
    if (!index_.resource_of_pool[pp.pool].empty())
      after[index_.resource_of_pool[pp.pool]] += pp.units;
  }
  return mine <= Drs(cohort, victim.project_id, &after) ||
         mine < Drs(cohort, victim.project_id, &before);
}

FairShareStanding CapacitySnapshot::FairShareOf(const SchedulerJob& job, int cohort) const {
  FairShareStanding standing;
  standing.project = job.project_id;
  standing.share = std::max(Drs(cohort, job.project_id), FairKeyOf(job).drs);
  for (const CohortMember& m : fleet_.cohorts[cohort].members) {
    if (m.project == job.project_id) continue;
    if (const double d = Drs(cohort, m.project); d > standing.top) {
      standing.top = d;
      standing.top_project = m.project;
    }
  }
  return standing;
}

}  // namespace trainyard
