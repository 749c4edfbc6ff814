// Scheduler::NextTimeDrivenDecision: when the clock alone may change what a cycle decides.
#include "services/fleet/availability_change.h"
#include "services/scheduler/scheduler.h"

namespace trainyard {

using std::chrono::duration_cast;
using std::chrono::microseconds;

std::optional<Timestamp> Scheduler::NextTimeDrivenDecision(Timestamp now) const {
  std::optional<Timestamp> next = NextPreemptionDue();
  auto take = [&next](std::optional<Timestamp> at) {
    if (at && (!next || *at < *next)) next = at;
  };
  // Nothing waits: the clock has nothing to decide for (a preemption under way aside).
  if (queues_.pending_count() == 0) return next;
  // A waiting DWS request's verdict says how long it has waited: it changes with every cycle.
  // Only FLEX_START jobs wait for DWS pools, so a fleet with such pools and no request is quiet.
  if (queues_.dws().size() > 0) return now;
  for (const CapacityPool& pool : fleet_.pools)
    take(NextAvailabilityChange(pool, now, fleet_.epoch));
  take(queues_.NextDeadline());
  if (config_.max_reservations > 0) {
    // Evaluate: a job below reserve_min_priority may hold capacity once it has waited this long.
    const microseconds wait = duration_cast<microseconds>(config_.reserve_min_wait);
    if (auto queued = queues_.FirstQueuedAfter(now - wait, config_.reserve_min_priority)) {
      take(*queued + wait);
    }
    take(backfill_.NextChange(now, config_.backfill_horizon));
    // Backfill: a job passes a hold only while it would end before the hold starts.
    if (holds_passable_until_ != Timestamp::max()) take(holds_passable_until_);
  }
  if (!index_.cohort_of_project.empty()) {
    // Preemptor: a borrower becomes a victim for reclaim or fair sharing once it has run past its
    // exemption.
    const microseconds exemption = duration_cast<microseconds>(config_.preemption_exemption);
    for (const auto& [id, job] : running_) {
      if (job.running_since && *job.running_since + exemption > now) {
        take(*job.running_since + exemption);
      }
    }
  }
  return next;
}

}  // namespace trainyard
