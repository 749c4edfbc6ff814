#pragma once
// The simulated fleet's failures, in virtual time: spot preemptions (the pool's hazard per
// node-hour, drawn from the fleet's seed; 30 s notice; the job restarts from the queue up to 6
// times, then FAILS with STOCKOUT), node failures (injected, or a pool's failure hazard; FAILED →
// REPAIRING for the fleet's repairTime → READY, the job waiting PENDING meanwhile and resuming
// with the run time it had left), and the faults injected over HTTP.
//
// Exactly one actor per database: the scheduler leader runs Step() in its pass, on its own
// connection (which holds the leader lock). Each change is its own short transaction.
#include <optional>

#include "services/fleet/failure_store.h"
#include "services/fleet/fleet.h"

namespace trainyard {

struct FailureStepStats {
  int notices = 0;
  int reclaimed = 0;
  int failed = 0;
  int repaired = 0;
  int injections = 0;
};

// When Step may next act on `fleet` for a reason no node's own time gives (a repair's or a
// reclaim's, which the store holds): `now` while a pool draws hazards each tick (node failures,
// spot preemptions, spot capacity that falls) or a calendar window's end notice is being given;
// else the next window's notice. None: never. A replay wakes for this instead of every minute.
std::optional<Timestamp> NextFleetDraw(const Fleet& fleet, Timestamp now);

class FailureSimulator {
 public:
  // `run_ends_known`: the runtime is the simulator, whose next action for a RUNNING job is its
  // run's end, so a job whose next action falls before a reclaim or a failure ends first. A real
  // runtime's next action is only its next look.
  FailureSimulator(FailureStore& store, const Fleet& fleet, bool run_ends_known = true)
      : store_(store), fleet_(fleet), run_ends_known_(run_ends_known) {}

  // Everything due at virtual time `now`: repairs, injected faults, hazard draws, reclaims.
  StatusOr<FailureStepStats> Step(Timestamp now);

 private:
  StatusOr<std::map<int64_t, JobRecord>> JobsOn(const std::vector<NodeStatus>& nodes);
  Status FinishRepairs(Timestamp now, FailureStepStats& stats);
  Status ApplyInjections(Timestamp now, FailureStepStats& stats);
  // Preemption notices for an injected spot preemption, nodes picked by the fleet's seed.
  StatusOr<std::vector<SpotNotice>> PickNotices(const FaultInjection& injection, Timestamp now);
  Status DrawHazards(Timestamp now, FailureStepStats& stats);
  // A spot pool whose capacity fell in ticks [first, last]: notices for the nodes beyond what
  // is left, all at the fall (services/fleet/spot_availability.h).
  Status ShrinkSpot(int64_t first, int64_t last, std::vector<SpotNotice>& notices);
  // A calendar-mode reservation whose window ends within the spot notice: notices for every node
  // a job still holds there, due at the window's end.
  Status EndWindows(Timestamp now, FailureStepStats& stats);
  // A spot pool sharing its zone's capacity with on-demand (services/fleet/zone_capacity.h):
  // notices for the spot units beyond what on-demand leaves now, as the zone's on-demand demand
  // rises (spot is reclaimed first).
  Status YieldSpotToOnDemand(Timestamp now, FailureStepStats& stats);
  Status ReclaimDue(Timestamp now, FailureStepStats& stats);
  // false: the node's job moved on meanwhile; try again next pass.
  StatusOr<bool> Fail(const NodeRef& node, Timestamp at, std::optional<InjectionDone> injection);

  FailureStore& store_;
  const Fleet& fleet_;
  bool run_ends_known_ = true;
};

}  // namespace trainyard
