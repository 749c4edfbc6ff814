#include "services/scheduler/preemptor.h"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>

#include "services/scheduler/workload_key.h"

namespace trainyard {
namespace {

using std::chrono::duration_cast;
using std::chrono::microseconds;

}  // namespace

// The candidates of one plan: per zone, and what reclaim and fair sharing say of them.
struct Preemptor::Gathered {
  // By zone index: zones are tried in the region's order, as fits try them, so a tie between two
  // zones never follows the order the running jobs came in (which differs between the stores).
  std::map<int, std::vector<const RunningJob*>> by_zone;
  std::unordered_set<int64_t> borrowers;        // reclaimed whatever fair sharing says
  std::unordered_map<std::string, double> drs;  // of the projects whose borrowers are candidates
  bool reclaim = false;
  std::optional<double> DrsOf(const RunningJob& r) const {
    auto it = drs.find(r.project_id);
    return it == drs.end() ? std::nullopt : std::optional(it->second);
  }
};

Preemptor::Preemptor(const Fleet& fleet, const FleetIndex& index, Duration exemption)
    : fleet_(fleet), index_(index), exemption_(exemption) {}

bool Preemptor::StopsBefore(const RunningJob& a, std::optional<double> drs_a, const RunningJob& b,
                            std::optional<double> drs_b, Timestamp now) const {
  if (drs_a.has_value() != drs_b.has_value()) return drs_a.has_value();
  if (drs_a && *drs_a != *drs_b) return *drs_a > *drs_b;
  const Duration grace = fleet_.termination_grace;
  const Duration la = WorkLostIfStopped(a, now, grace), lb = WorkLostIfStopped(b, now, grace);
  if (la != lb) return la < lb;
  if (a.priority != b.priority) return a.priority < b.priority;
  if (a.admitted_at != b.admitted_at) return a.admitted_at > b.admitted_at;
  return a.id > b.id;
}

std::optional<PreemptionPlan> Preemptor::Plan(const SchedulerJob& job,
                                              const PreemptionCandidates& candidates,
                                              const CapacitySnapshot& snapshot,
                                              const FlavorAssigner& assigner,
                                              const FitOptions& options) const {
  Gathered g = Gather(job, candidates, snapshot, options);
  std::optional<PreemptionPlan> best;
  for (auto& [zone, zone_candidates] : g.by_zone) {
    std::sort(zone_candidates.begin(), zone_candidates.end(),
              [&](const RunningJob* a, const RunningJob* b) {
                return StopsBefore(*a, g.DrsOf(*a), *b, g.DrsOf(*b), snapshot.now());
              });
    std::optional<PreemptionPlan> plan =
        PlanInZone(job, zone, zone_candidates, g, snapshot, assigner, options);
    if (!plan || static_cast<int>(plan->victims.size()) > candidates.victims_left) continue;
    if (!best || plan->victims.size() < best->victims.size()) best = std::move(plan);
  }
  return best;
}

Preemptor::Gathered Preemptor::Gather(const SchedulerJob& job,
                                      const PreemptionCandidates& candidates,
                                      const CapacitySnapshot& snapshot,
                                      const FitOptions& options) const {
  // Candidates: lower-priority admitted jobs of the same queue (Kueue's withinClusterQueue:
  // LowerPriority), never DWS work, which runs to its end once provisioned; and the work other
  // cohort members run on borrowed capacity, whatever its priority, once it has run the
  // exemption: all of it for a member still within its nominal share (Kueue's
  // reclaimWithinCohort), and otherwise what fair sharing allows — never an owner's share.
  Gathered g;
  auto consider = [&](const RunningJob& r) {
    // A persistent resource's hold, and the jobs on its nodes, are never victims.
    if (candidates.claimed->count(r.id) > 0 || IsHoldKey(r.id) || !r.on_resource.empty()) return;
    bool dws = false;
    for (const PlacedPool& pp : r.placement.pools) {
      dws = dws || fleet_.pools[pp.pool].model == ConsumptionModel::kFlexStart;
    }
    if (!dws) g.by_zone[index_.zone_of_pool[r.placement.pools[0].pool]].push_back(&r);
  };
  for (const RunningJob* r : candidates.lower_priority) consider(*r);
  if (auto c = index_.cohort_of_project.find(job.project_id); c != index_.cohort_of_project.end()) {
    const std::vector<ConsumptionModel> models(options.flavors.begin(), options.flavors.end());
    g.reclaim = snapshot.MayReclaim(job, models);
    const Timestamp exempt_since = snapshot.now() - duration_cast<microseconds>(exemption_);
    for (const RunningJob* r : candidates.cohort) {
      auto rc = index_.cohort_of_project.find(r->project_id);
      if (r->project_id == job.project_id || rc == index_.cohort_of_project.end() ||
          rc->second != c->second || !r->running_since || *r->running_since > exempt_since ||
          !snapshot.Borrowing(*r)) {
        continue;
      }
      if (g.reclaim) g.borrowers.insert(r->id);
      g.drs.try_emplace(r->project_id, snapshot.Drs(c->second, r->project_id));
      consider(*r);
    }
  }
  return g;
}

std::optional<PreemptionPlan> Preemptor::PlanInZone(
    const SchedulerJob& job, int zone, const std::vector<const RunningJob*>& candidates,
    const Gathered& g, const CapacitySnapshot& snapshot, const FlavorAssigner& assigner,
    const FitOptions& options) const {
  FitOptions in_zone = options;
  in_zone.only_zone = zone;
  auto place = [&](const FreedUnits& freed) {
    in_zone.freed = freed;
    return assigner.Place(job, snapshot, in_zone);
  };
  // When every candidate together cannot make room, no subset can (a fit only gains from more
  // units): one fit says so, instead of one per candidate, which is how most plans end in a full
  // fleet.
  FreedUnits all;
  for (const RunningJob* c : candidates) {
    for (const PlacedPool& pp : c->placement.pools) AddFreed(all, pp.pool, pp.units);
  }
  if (!place(all)) return std::nullopt;
  FreedUnits freed;
  std::vector<const RunningJob*> victims;
  std::unordered_set<int64_t> fair_shared;
  std::map<std::string, CapacitySnapshot::UnitsByResource> taken;  // what its victims give back
  std::optional<Placement> fit;
  for (const RunningJob* c : candidates) {
    // Removing victims only lowers their project's share: each is judged after the ones before.
    if (g.DrsOf(*c) && !g.reclaim) {
      if (!snapshot.FairShareAllows(job, *c, taken)) continue;
      fair_shared.insert(c->id);
    }
    for (const PlacedPool& pp : c->placement.pools) {
      AddFreed(freed, pp.pool, pp.units);
      if (!index_.resource_of_pool[pp.pool].empty()) {
        taken[c->project_id][index_.resource_of_pool[pp.pool]] += pp.units;
      }
    }
    victims.push_back(c);
    fit = place(freed);
    if (fit) break;
  }
  if (!fit) return std::nullopt;
  // Give back, newest pick first, every victim the fit does not need (its project then keeps
  // more, so the fair-sharing judgement of the others still holds).
  for (size_t i = victims.size(); i-- > 0;) {
    FreedUnits without = freed;
    for (const PlacedPool& pp : victims[i]->placement.pools) AddFreed(without, pp.pool, -pp.units);
    if (std::optional<Placement> again = place(without)) {
      freed = std::move(without);
      fit = std::move(again);
      victims.erase(victims.begin() + static_cast<long>(i));
    }
  }
  return PlanOf(victims, g, fair_shared, std::move(*fit));
}

PreemptionPlan Preemptor::PlanOf(const std::vector<const RunningJob*>& victims, const Gathered& g,
                                 const std::unordered_set<int64_t>& fair_shared,
                                 Placement placement) {
  PreemptionPlan plan;
  for (const RunningJob* v : victims) {
    plan.victims.push_back(v->id);
    if (g.borrowers.count(v->id) > 0) plan.reclaimed.push_back(v->id);
    if (fair_shared.count(v->id) > 0) plan.fair_shared.push_back(v->id);
  }
  plan.placement = std::move(placement);
  return plan;
}

}  // namespace trainyard
