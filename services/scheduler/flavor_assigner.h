#pragma once
// The flavor assigner (docs/scheduler.md, "Parts"; Kueue's flavorassigner): where a gang fits
// on the capacity snapshot, in which zone and on which flavor (reservation, on-demand, spot,
// DWS), or why it fits nowhere, as a typed reason (fit_reason.h) that verdict_text.h words apart.
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "services/fleet/fleet.h"
#include "services/scheduler/capacity_snapshot.h"
#include "services/scheduler/dws_queue.h"
#include "services/scheduler/fit_reason.h"
#include "services/scheduler/fleet_index.h"
#include "services/scheduler/scheduler_job.h"

namespace trainyard {

// The flavors a job may take, most preferred first (its strategy and reservation affinity).
std::vector<ConsumptionModel> FlavorOrder(const SchedulerJob& job);
// The same into `into` (its memory reused: the cycle asks for every job it evaluates).
void FlavorOrder(const SchedulerJob& job, std::vector<ConsumptionModel>& into);

// Capacity backfill holds for a job that would otherwise starve: from `start`, the units per
// pool later long jobs may still take.
struct CapacityHold {
  int64_t job_id = 0;
  int priority = 0;
  Timestamp start{};
  // A gang's few pools: a vector searched in place beats a hash map on the path every fit walks
  // for every hold.
  std::vector<std::pair<int, int64_t>> slack;
  int64_t* SlackOf(int pool) {
    for (auto& [p, units] : slack) {
      if (p == pool) return &units;
    }
    return nullptr;
  }
  const int64_t* SlackOf(int pool) const { return const_cast<CapacityHold*>(this)->SlackOf(pool); }
};

// What a fit may count on beyond the snapshot, and where it may look:
// FitOptions(flavors).WithHolds(cycle_holds).WithFreed(freed).InZone(zone).
struct FitOptions {
  explicit FitOptions(std::span<const ConsumptionModel> flavors) : flavors(flavors) {}
  FitOptions& WithFreed(std::span<const PoolUnits> units) {
    freed = units;
    return *this;
  }
  // `passable_until` (if any) learns the earliest time a hold this fit passed (the job ending
  // before it starts) stops being passable: the clock alone then changes the fit.
  FitOptions& WithHolds(std::span<const CapacityHold> held, Timestamp* passable_until = nullptr) {
    holds = held;
    holds_passable_until = passable_until;
    return *this;
  }
  FitOptions& InZone(int zone) {
    only_zone = zone;
    return *this;
  }

  std::span<const ConsumptionModel> flavors;  // those quota allows, most preferred first
  std::span<const PoolUnits> freed;           // units planned victims or releases give back
  std::span<const CapacityHold> holds;        // capacity held for starving jobs: kept from it
  Timestamp* holds_passable_until = nullptr;  // see WithHolds
  std::optional<int> only_zone;               // a plan's zone (FleetIndex's number): no other
};

// A placement, or why there is none.
struct FitResult {
  std::optional<Placement> placement;
  FitReason reason;  // when there is no placement
  bool fits() const { return placement.has_value(); }
};

class FlavorAssigner {
 public:
  // `exemption`: SchedulerConfig::preemption_exemption, which a full cohort's reason names.
  FlavorAssigner(const Fleet& fleet, const FleetIndex& index, Duration exemption);
  // The DWS queue a FLEX_START pool admits from: a request has none of a pool's capacity before
  // its grant there. Unset: DWS capacity is had as soon as there is room.
  void SetDwsQueue(const DwsQueue* queue) { dws_ = queue; }

  // Where `job` fits now (the snapshot's time), or why it fits nowhere.
  FitResult Assign(const SchedulerJob& job, const CapacitySnapshot& snapshot,
                   const FitOptions& options) const;
  // The placement alone: planning (preemption, backfill) tries many fits and needs only those
  // that fit.
  std::optional<Placement> Place(const SchedulerJob& job, const CapacitySnapshot& snapshot,
                                 const FitOptions& options) const;
  // Whether fleet pool `pool` may hold worker pool `gp` of `job` on flavor `model`.
  bool PoolMatches(int pool, const SchedulerJob& job, const GangPool& gp,
                   ConsumptionModel model) const;

 private:
  class Fit;  // one job's fit: the snapshot and options it counts on
  struct PoolScan;
  std::optional<Placement> Search(const Fit& fit, int region, const CapacityHold** held_by) const;
  std::optional<Placement> PlaceInZone(const Fit& fit, int zone,
                                       const CapacityHold** held_by) const;
  FitReason WhyNot(const Fit& fit, int region) const;
  PoolScan Scan(const Fit& fit, int region, const GangPool& gp) const;
  std::optional<FitReason> ReasonOfPool(const Fit& fit, const GangPool& gp,
                                        const PoolScan& scan) const;
  fit_reason::ShareExhausted ShareExhaustedAt(const Fit& fit, int pool, int64_t need) const;
  fit_reason::CohortFull CohortFullAt(const Fit& fit, int pool) const;
  fit_reason::WaitingForDws WaitingForDwsOf(const Fit& fit, const GangPool& gp) const;

  const Fleet& fleet_;
  const FleetIndex& index_;
  Duration exemption_;
  const DwsQueue* dws_ = nullptr;
};

}  // namespace trainyard
