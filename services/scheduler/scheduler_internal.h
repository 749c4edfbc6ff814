#pragma once
// What the scheduler's files share and nothing else includes: the cycle's scratch state and the
// small helpers over pools and placements. The scheduler is one class whose work is split by job,
// the way Kueue splits its scheduler, queue manager and preemption: scheduler.cpp runs the cycle
// (evaluate, admit, fail); scheduler_queues.cpp keeps queue order, parking, positions and verdict
// interning; scheduler_fit.cpp fits gangs onto pools (flavors, units down, persistent resources);
// scheduler_quota.cpp counts quota and cohorts (borrowing, reclaim, fair sharing);
// scheduler_preemption.cpp plans preemptions and backfill holds.
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

inline std::string RegionOfZone(const std::string& zone) {
  size_t dash = zone.rfind('-');
  return dash == std::string::npos ? zone : zone.substr(0, dash);
}

inline int64_t ExtraFor(const void* extra_ptr, int pool) {
  if (extra_ptr == nullptr) return 0;
  const auto& extra = *static_cast<const std::vector<std::pair<int, int64_t>>*>(extra_ptr);
  int64_t sum = 0;
  for (const auto& [p, units] : extra) {
    if (p == pool) sum += units;
  }
  return sum;
}

// Units freed per pool add up; one entry per pool keeps a plan's extra as small as its pools
// (backfill walks thousands of releases) and its lookups short.
inline void AddExtra(std::vector<std::pair<int, int64_t>>& extra, int pool, int64_t units) {
  for (auto& [p, u] : extra) {
    if (p == pool) {
      u += units;
      return;
    }
  }
  extra.push_back({pool, units});
}

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
