#pragma once
// What the scheduler's files share and nothing else includes: the cycle's scratch state and the
// small helpers over pools and placements. The scheduler composes its parts (docs/scheduler.md,
// "Parts"): FleetIndex numbers the fleet, CapacitySnapshot counts free units, quota and cohorts,
// FlavorAssigner fits gangs. Its own files: scheduler.cpp runs the cycle (evaluate, admit, fail);
// scheduler_queues.cpp keeps queue order, parking, positions and verdict interning;
// scheduler_fit.cpp keeps units down and what persistent resources hold; scheduler_quota.cpp
// books what admitted jobs hold; scheduler_preemption.cpp plans preemptions and backfill holds.
#include <memory>
#include <memory_resource>
#include <string>
#include <utility>
#include <vector>

#include "services/scheduler/scheduler.h"

namespace trainyard {
namespace scheduler_detail {

using CM = ConsumptionModel;
using std::chrono::duration_cast;
using std::chrono::microseconds;

// Below this many active entry slots (a few slabs) compaction is not worth its copies.
constexpr size_t kCompactAtSlots = 4096;

inline int64_t TakenIn(const Placement& placement, int pool) {
  int64_t sum = 0;
  for (const PlacedPool& pp : placement.pools) {
    if (pp.pool == pool) sum += pp.units;
  }
  return sum;
}

// Puts `v`'s elements on `to` (an allocator-extended move), unless they are there already.
template <typename PmrVector>
void Rehome(PmrVector& v, std::pmr::memory_resource* to) {
  if (v.get_allocator().resource() == to) return;
  PmrVector moved(std::move(v), to);
  std::destroy_at(&v);
  std::construct_at(&v, std::move(moved));  // a move keeps the allocator
}

}  // namespace scheduler_detail

// What one cycle remembers: verdicts per shape, holds for starving jobs, victims already claimed.
struct Scheduler::Cycle {
  Timestamp now{};
  bool report_positions = true;
  double budget = 0;
  std::vector<Hold> holds;
  std::unordered_set<int64_t> claimed;
  int victims_left = 0;
  int reservations_left = 0;
  // Each at most once a cycle; an entry admitted (and erased) since is null.
  std::vector<PendingEntry*> evaluated;
};

}  // namespace trainyard
