#pragma once
// What the scheduler's files share and nothing else includes: the cycle's scratch state and a
// helper over placements. The scheduler composes its parts (docs/scheduler.md, "Parts"):
// FleetIndex numbers the fleet, CapacitySnapshot counts free units, quota and cohorts,
// FlavorAssigner fits gangs, Preemptor picks victims, Backfill books holds, QueueManager keeps the
// waiting jobs. Its own files: scheduler.cpp runs the cycle (evaluate, admit, fail);
// scheduler_queues.cpp feeds the queues and reports positions and verdicts;
// scheduler_resources.cpp keeps units down and what persistent resources hold;
// scheduler_quota.cpp books what admitted jobs hold; scheduler_preemption.cpp runs preemptions
// through their grace and keeps the cycle's holds.
#include <algorithm>
#include <memory>
#include <memory_resource>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "services/scheduler/scheduler.h"

namespace trainyard {
namespace scheduler_detail {

using CM = ConsumptionModel;
using std::chrono::duration_cast;
using std::chrono::microseconds;

inline int64_t TakenIn(const Placement& placement, int pool) {
  int64_t sum = 0;
  for (const PlacedPool& pp : placement.pools) {
    if (pp.pool == pool) sum += pp.units;
  }
  return sum;
}

}  // namespace scheduler_detail

// What one cycle remembers: verdicts per shape, holds for starving jobs, victims already claimed.
struct Scheduler::Cycle {
  Timestamp now{};
  bool report_positions = true;
  double budget = 0;
  std::vector<Hold> holds;
  // When a hold some fit of this cycle passed stops being passable (FitOptions::WithHolds).
  Timestamp holds_passable_until = Timestamp::max();
  std::unordered_set<int64_t> claimed;
  int victims_left = 0;
  int reservations_left = 0;
  // Each at most once a cycle; an entry admitted (and erased) since is null.
  std::vector<PendingEntry*> evaluated;
  // Preemption candidates of the job being planned for (Scheduler::PlanPreemption's scratch).
  std::vector<const RunningJob*> lower_priority;
  std::vector<const RunningJob*> cohort;
  // One cursor per queue, best head first: RunCycle's heap (std::push_heap with greater).
  struct Cursor {
    FairKey fair;
    RankKey key;
    int queue;
    size_t at;  // in the queue's walk
    int visited;
    bool operator>(const Cursor& other) const {
      return std::tie(fair, key) > std::tie(other.fair, other.key);
    }
  };
  std::vector<Cursor> cursors;
  std::vector<bool> walked;  // ReportPositions': the queues walked for positions

  // Ready for a cycle at `now`; what it kept from the last one is only memory.
  void Begin(Timestamp at, bool positions, const SchedulerConfig& config) {
    now = at;
    report_positions = positions;
    budget = config.evaluation_budget;
    holds.clear();
    holds.reserve(static_cast<size_t>(std::max(0, config.max_reservations)));
    holds_passable_until = Timestamp::max();
    claimed.clear();
    victims_left = config.max_victims;
    reservations_left = config.max_reservations;
    evaluated.clear();
    lower_priority.clear();
    cohort.clear();
    cursors.clear();
    walked.clear();
  }
};

}  // namespace trainyard
