// Preemptions (the preemptor picks the victims; here they run out their termination grace) and
// backfill holds for jobs that would otherwise starve.
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
  // On the cycle's scratch: a plan for every job that does not fit would otherwise allocate.
  std::vector<const RunningJob*>& lower = cycle.lower_priority;
  lower.clear();
  for (const Queue::RunningRef& r : queues_[static_cast<size_t>(queue)].running) {
    if (r.priority < job.priority) lower.push_back(r.job);
  }
  std::vector<const RunningJob*>& cohort = cycle.cohort;  // other members' borrowers too
  cohort.clear();
  if (index_.cohort_of_project.count(job.project_id) > 0) {
    for (const auto& [id, r] : running_) cohort.push_back(&r);
  }
  return preemptor_.Plan(
      job, PreemptionCandidates{lower, cohort, &cycle.claimed, cycle.victims_left}, capacity_,
      assigner_, FitOptions(models).WithHolds(cycle.holds, &cycle.holds_passable_until));
}

std::optional<Scheduler::Booked> Scheduler::ReserveCapacity(
    const SchedulerJob& job, int shape, Cycle& cycle, const std::vector<ConsumptionModel>& models) {
  const std::optional<Reservation>* reserved =
      reservations_.Find(cycles_, capacity_changes_, shape, models);
  if (reserved == nullptr) {
    reservations_.Remember(
        cycles_, capacity_changes_, shape, models,
        backfill_.Reserve(job, capacity_, assigner_, models, config_.backfill_horizon),
        queues_.shape_count());
    reserved = reservations_.Find(cycles_, capacity_changes_, shape, models);
  }
  if (!reserved->has_value()) return std::nullopt;
  const Reservation& found = **reserved;
  const Booked booked{index_.ZoneIndex(found.zone), found.hold.start};
  cycle.holds.push_back(found.hold);
  cycle.holds.back().job_id = job.id;  // the search's own job: the rest is the shape's
  --cycle.reservations_left;
  return booked;
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
  entry.verdict.key = {};
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
    entry.verdict.key = {};
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
                      FitOptions(p.models)
                          .WithFreed(extra)
                          .WithHolds(cycle.holds, &cycle.holds_passable_until)
                          .InZone(zone));
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

std::optional<Timestamp> Scheduler::NextDwsGrant(Timestamp now) const {
  return queues_.dws().NextGrant(fleet_, now);
}

std::optional<Timestamp> Scheduler::NextPreemptionDue() const {
  std::optional<Timestamp> next;
  for (const auto& [id, p] : preempting_) {
    if (!next || p.due < *next) next = p.due;
  }
  return next;
}

}  // namespace trainyard
