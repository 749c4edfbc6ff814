// Preemption plans (lower priorities, reclaim, fair sharing) and backfill holds for jobs that would
// otherwise starve.
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
  if (auto c = index_.cohort_of_project.find(job.project_id); c != index_.cohort_of_project.end()) {
    reclaim = capacity_.MayReclaim(job, models);
    const Timestamp exempt_since =
        cycle.now - duration_cast<microseconds>(config_.preemption_exemption);
    for (const auto& [id, r] : running_) {
      auto rc = index_.cohort_of_project.find(r.project_id);
      if (r.project_id == job.project_id || rc == index_.cohort_of_project.end() ||
          rc->second != c->second || !r.running_since || *r.running_since > exempt_since ||
          !capacity_.Borrowing(r)) {
        continue;
      }
      if (reclaim) borrowers.insert(id);
      drs.try_emplace(r.project_id, capacity_.Drs(c->second, r.project_id));
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
      const Duration grace = fleet_.termination_grace;
      const Duration la = WorkLostIfStopped(*a, cycle.now, grace),
                     lb = WorkLostIfStopped(*b, cycle.now, grace);
      if (la != lb) return la < lb;
      if (a->priority != b->priority) return a->priority < b->priority;
      if (a->admitted_at != b->admitted_at) return a->admitted_at > b->admitted_at;
      return a->id > b->id;
    });
    int zone_index = index_.zone_of_pool[candidates[0]->placement.pools[0].pool];
    // When every candidate together cannot make room, no subset can (a fit only gains from more
    // units): one fit says so, instead of one per candidate, which is how most plans end in a
    // full fleet.
    Extra all;
    for (const RunningJob* c : candidates) {
      for (const PlacedPool& pp : c->placement.pools) AddFreed(all, pp.pool, pp.units);
    }
    auto place = [&](const Extra& freed) {
      return assigner_.Place(
          job, capacity_,
          FitOptions(models).WithFreed(freed).WithHolds(cycle.holds).InZone(zone_index));
    };
    if (!place(all)) continue;
    Extra extra;
    std::vector<const RunningJob*> victims;
    std::unordered_set<int64_t> fair_shared;
    std::map<std::string, UnitsByResource> taken;  // project → what its victims give back
    std::optional<Placement> fit;
    for (const RunningJob* c : candidates) {
      // Removing victims only lowers their project's share: each is judged after the ones before.
      if (other_borrower(c) && !reclaim) {
        if (!capacity_.FairShareAllows(job, *c, taken)) continue;
        fair_shared.insert(c->id);
      }
      for (const PlacedPool& pp : c->placement.pools) {
        AddFreed(extra, pp.pool, pp.units);
        if (!index_.resource_of_pool[pp.pool].empty()) {
          taken[c->project_id][index_.resource_of_pool[pp.pool]] += pp.units;
        }
      }
      victims.push_back(c);
      fit = place(extra);
      if (fit) break;
    }
    if (!fit) continue;
    // Give back, newest pick first, every victim the fit does not need (its project then keeps
    // more, so the fair-sharing judgement of the others still holds).
    for (size_t i = victims.size(); i-- > 0;) {
      Extra without = extra;
      for (const PlacedPool& pp : victims[i]->placement.pools) {
        AddFreed(without, pp.pool, -pp.units);
      }
      std::optional<Placement> again = place(without);
      if (again) {
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
      best->placement = *fit;
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
      AddFreed(extra, std::get<2>(*it), std::get<3>(*it));
    }
    // Holds of other jobs do not count: this job's own would start behind them anyway.
    std::optional<Placement> fit =
        assigner_.Place(job, capacity_, FitOptions(models).WithFreed(extra));
    if (!fit) continue;
    Hold hold;
    hold.job_id = job.id;
    hold.priority = job.priority;
    hold.start = t;
    for (const PlacedPool& pp : fit->pools) {
      const int64_t slack = capacity_.Available(pp.pool, cycle.now) + FreedIn(extra, pp.pool) -
                            TakenIn(*fit, pp.pool);
      if (int64_t* s = hold.SlackOf(pp.pool)) {
        *s = slack;
      } else {
        hold.slack.push_back({pp.pool, slack});
      }
    }
    cycle.holds.push_back(std::move(hold));
    --cycle.reservations_left;
    verdict.message += ReservedSuffix(fit->zone, t);
    return;
  }
}

void Scheduler::AdmitPreempting(PendingEntry& entry, PreemptionPlan plan, Cycle& cycle,
                                CycleResult& result) {
  Admit(entry, plan.placement, std::move(plan.victims), cycle, result);
  AdmissionDecision& a = result.admissions.back();
  a.reclaimed = std::move(plan.reclaimed);
  a.fair_shared = std::move(plan.fair_shared);
  a.message += PreemptedSuffix(a.victims.size(), a.reclaimed.size(), a.fair_shared.size());
}

void Scheduler::StartPreemption(PendingEntry& entry, PreemptionPlan plan,
                                std::vector<ConsumptionModel> models, Cycle& cycle,
                                CycleResult& result) {
  cycle.claimed.insert(plan.victims.begin(), plan.victims.end());
  cycle.victims_left -= static_cast<int>(plan.victims.size());
  Preempting p;
  for (int64_t v : plan.victims) {
    p.victims_share.push_back(running_.at(v));
    AddShare(p.victims_share.back(), -1);
  }
  p.preemptor_share = MakeRunningJob(entry.job, plan.placement, fleet_, cycle.now);
  AddShare(p.preemptor_share, +1);
  p.notice_at = cycle.now;
  p.due = cycle.now + duration_cast<microseconds>(fleet_.termination_grace);
  p.models = std::move(models);
  p.plan = std::move(plan);
  entry.verdict.code = ReasonCode::kPreempting;
  entry.verdict.message =
      PreemptingMessage(p.plan.victims, p.plan.reclaimed.size(), p.plan.fair_shared.size(),
                        fleet_.termination_grace, p.due);
  for (int64_t v : p.plan.victims) {
    result.notices.push_back(
        {v, VictimNoticeMessage(entry.job.id, CauseAmong(v, p.plan.reclaimed, p.plan.fair_shared),
                                fleet_.termination_grace, p.due)});
  }
  preempting_.insert_or_assign(entry.job.id, std::move(p));
}

bool Scheduler::ContinuePreemption(PendingEntry& entry, Preempting& p, Cycle& cycle,
                                   CycleResult& result) {
  // Victims that ended meanwhile (finished, failed, cancelled) free their nodes by themselves.
  auto gone = [&](int64_t id) { return running_.count(id) == 0; };
  for (std::vector<int64_t>* ids : {&p.plan.victims, &p.plan.reclaimed, &p.plan.fair_shared}) {
    ids->erase(std::remove_if(ids->begin(), ids->end(), gone), ids->end());
  }
  if (!p.plan.victims.empty() && cycle.now < p.due) {
    entry.verdict.code = ReasonCode::kPreempting;
    entry.verdict.message =
        PreemptingMessage(p.plan.victims, p.plan.reclaimed.size(), p.plan.fair_shared.size(),
                          fleet_.termination_grace, p.due);
    return true;
  }
  // The grace is over: the same fit on what the victims give back, in the zone planned.
  Extra extra;
  std::vector<int64_t> saved;
  for (int64_t v : p.plan.victims) {
    const RunningJob& r = running_.at(v);
    for (const PlacedPool& pp : r.placement.pools) AddFreed(extra, pp.pool, pp.units);
    if (r.emergency_checkpoint && *r.emergency_checkpoint <= fleet_.termination_grace) {
      saved.push_back(v);
    }
  }
  EndPreemption(p);  // from here the fit and the admission account for themselves
  const int zone = index_.ZoneIndex(p.plan.placement.zone);
  if (zone < 0) return false;
  std::optional<Placement> fit =
      assigner_.Place(entry.job, capacity_,
                      FitOptions(p.models).WithFreed(extra).WithHolds(cycle.holds).InZone(zone));
  if (!fit) return false;
  const int64_t id = entry.job.id;
  const Timestamp notice_at = p.notice_at;
  PreemptionPlan plan = std::move(p.plan);
  plan.placement = std::move(*fit);
  preempting_.erase(id);  // `p` is gone
  const bool stops_any = !plan.victims.empty();
  AdmitPreempting(entry, std::move(plan), cycle, result);
  if (stops_any) {
    result.admissions.back().notice_at = notice_at;
    result.admissions.back().saved_at_notice = std::move(saved);
  }
  return true;
}

void Scheduler::EndPreemption(Preempting& p) {
  for (const RunningJob& v : p.victims_share) AddShare(v, +1);
  p.victims_share.clear();
  if (p.preemptor_share.id != 0) AddShare(p.preemptor_share, -1);
  p.preemptor_share = RunningJob{};
}

void Scheduler::CallOffPreemption(int64_t preemptor, Preempting& p, CycleResult& result) {
  EndPreemption(p);
  for (int64_t v : p.plan.victims) {
    if (running_.count(v) == 0) continue;
    result.notices.push_back({v,
                              "the preemption by job " + std::to_string(preemptor) +
                                  " was called off (it no longer waits for this capacity); runs on",
                              "ADMITTED"});
  }
}

std::optional<Timestamp> Scheduler::NextPreemptionDue() const {
  std::optional<Timestamp> next;
  for (const auto& [id, p] : preempting_) {
    if (!next || p.due < *next) next = p.due;
  }
  return next;
}

}  // namespace trainyard
