// Preemption plans (lower priorities, reclaim, fair sharing) and backfill holds for jobs that would
// otherwise starve.
#include "services/scheduler/scheduler.h"

#include <algorithm>
#include <array>
#include <queue>

#include "services/catalog.h"
#include "services/scheduler/scheduler_internal.h"
#include "services/scheduler/verdict_text.h"
#include "services/scheduler/workload_key.h"

namespace trainyard {

using namespace scheduler_detail;

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
          rc->second != c->second || !r.running_since || *r.running_since > exempt_since ||
          !Borrowing(r)) {
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
    // Other members' borrowed work first, the largest share's first; then the least work lost
    // (the time since its last checkpoint), the lowest priority, the newest admitted.
    std::sort(candidates.begin(), candidates.end(), [&](const RunningJob* a, const RunningJob* b) {
      const bool ba = other_borrower(a), bb = other_borrower(b);
      if (ba != bb) return ba;
      if (ba && drs.at(a->project_id) != drs.at(b->project_id)) {
        return drs.at(a->project_id) > drs.at(b->project_id);
      }
      const Duration la = WorkLostIfStopped(*a, cycle.now), lb = WorkLostIfStopped(*b, cycle.now);
      if (la != lb) return la < lb;
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

}  // namespace trainyard
