// Quota and cohorts: usage per project and metric, nominal shares, borrowing, reclaim and fair
// sharing.
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
  for (const PlacedPool& pp : job.placement.pools) used_[pp.pool] += sign * pp.units;
  AddShare(job, sign);
  SetRunning(queues_[QueueFor(job.project_id, job.region)], job, sign);
}

void Scheduler::AddShare(const RunningJob& job, int sign) {
  if (!job.on_resource.empty()) return;
  for (const PlacedPool& pp : job.placement.pools) {
    if (const int c = fleet_.pools[pp.pool].cohort; c >= 0) {
      cohort_usage_[c][resource_of_pool_[pp.pool]][job.project_id] += sign * pp.units;
    }
  }
  for (const QuotaDemand& d : job.quota) {
    accounts_[AccountOf(job.project_id, d.metric)].used += sign * d.amount;
  }
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

}  // namespace trainyard
