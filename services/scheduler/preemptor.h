#pragma once
// The preemptor (docs/scheduler.md, "Parts"; Kueue's preemption): which admitted jobs stop so
// that a job that does not fit does. Lower priorities of its own queue, and the work other cohort
// members run on borrowed capacity (reclaim, fair sharing); of those, the fewest that make room,
// the ones that lose the least work first.
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_set>
#include <vector>

#include "services/fleet/fleet.h"
#include "services/scheduler/capacity_snapshot.h"
#include "services/scheduler/flavor_assigner.h"
#include "services/scheduler/scheduler_job.h"

namespace trainyard {

struct PreemptionPlan {
  Placement placement;
  std::vector<int64_t> victims;
  std::vector<int64_t> reclaimed;    // of the victims
  std::vector<int64_t> fair_shared;  // of the victims
};

// Who may be asked to stop.
struct PreemptionCandidates {
  // Admitted jobs of the job's own queue with a lower priority.
  std::span<const RunningJob* const> lower_priority;
  // Every admitted job, when the job's project is a cohort member (others borrowing from it).
  std::span<const RunningJob* const> cohort;
  const std::unordered_set<int64_t>* claimed = nullptr;  // stopping for another plan already
  int victims_left = 0;                                  // of the cycle's max_victims
};

class Preemptor {
 public:
  // `exemption`: work RUNNING for less is not taken back by reclaim or fair sharing.
  Preemptor(const Fleet& fleet, const FleetIndex& index, Duration exemption);

  // The plan that stops the fewest jobs for `job` (placed on `options`' flavors, respecting its
  // holds), or none. At most `victims_left` victims.
  std::optional<PreemptionPlan> Plan(const SchedulerJob& job,
                                     const PreemptionCandidates& candidates,
                                     const CapacitySnapshot& snapshot,
                                     const FlavorAssigner& assigner,
                                     const FitOptions& options) const;

  // The order victims are picked in: other members' borrowed work first, the largest share's
  // first (`drs` of a borrower's project; none: not a borrower); then the least work lost when
  // stopped at `now` with the fleet's termination grace, the lowest priority, the newest
  // admitted.
  bool StopsBefore(const RunningJob& a, std::optional<double> drs_a, const RunningJob& b,
                   std::optional<double> drs_b, Timestamp now) const;

 private:
  struct Gathered;
  Gathered Gather(const SchedulerJob& job, const PreemptionCandidates& candidates,
                  const CapacitySnapshot& snapshot, const FitOptions& options) const;
  static PreemptionPlan PlanOf(const std::vector<const RunningJob*>& victims, const Gathered& g,
                               const std::unordered_set<int64_t>& fair_shared, Placement placement);
  std::optional<PreemptionPlan> PlanInZone(const SchedulerJob& job, int zone,
                                           const std::vector<const RunningJob*>& candidates,
                                           const Gathered& g, const CapacitySnapshot& snapshot,
                                           const FlavorAssigner& assigner,
                                           const FitOptions& options) const;

  const Fleet& fleet_;
  const FleetIndex& index_;
  Duration exemption_;
};

}  // namespace trainyard
