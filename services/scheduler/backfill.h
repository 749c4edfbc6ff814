#pragma once
// Backfill (docs/scheduler.md, "Backfill without bitmaps"; Slurm's backfill on counts): the
// running jobs' expected ends per region, and the earliest time a job blocked by capacity fits
// once they end, which it then holds (a CapacityHold) against later long jobs.
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "services/scheduler/capacity_snapshot.h"
#include "services/scheduler/flavor_assigner.h"
#include "services/scheduler/scheduler_job.h"
#include "services/scheduler/slab_pool.h"

namespace trainyard {

// A hold backfill booked, and the zone it is in.
struct Reservation {
  CapacityHold hold;
  std::string zone;
};

class Backfill {
 public:
  Backfill() = default;
  Backfill(const Backfill&) = delete;
  Backfill& operator=(const Backfill&) = delete;

  // An admitted job starts (+1) or stops (-1) counting: its pools free at its expected end.
  void AddRunning(const RunningJob& job, int sign);
  void Clear();

  // The earliest time within `horizon` of the snapshot's time at which `job` fits on `flavors`
  // once the running jobs due by then have ended, as a hold of what it would take; none if it
  // does not fit within the horizon.
  std::optional<Reservation> Reserve(const SchedulerJob& job, const CapacitySnapshot& snapshot,
                                     const FlavorAssigner& assigner,
                                     const std::vector<ConsumptionModel>& flavors,
                                     Duration horizon) const;
  // When Reserve could answer otherwise with no job starting or ending: the earliest running
  // job's expected end (from then a hold on it starts at the clock, which moves its start and what
  // its verdict says with every cycle; `now` itself while one is past it), or an expected end
  // coming within `horizon` (a hold may then be booked on it), whichever is first.
  std::optional<Timestamp> NextChange(Timestamp now, Duration horizon) const;

 private:
  // Per region: each running job's (expected end, id, pool, units), in the order backfill walks
  // them. Kept as jobs start and stop, on a pool of its own, so a reservation reads a few dense
  // slabs rather than every running job's placement among all the jobs' allocations.
  using Release = std::tuple<Timestamp, int64_t, int, int64_t>;
  using Releases = std::multiset<Release, std::less<Release>, PoolAllocator<Release>>;
  std::unique_ptr<NodePool> release_nodes_ = std::make_unique<NodePool>();
  std::unordered_map<std::string, Releases> releases_;
  // Reserve's units freed so far, kept between calls: grown anew for every hold it cost a malloc
  // on each, slow on a heap a long replay has fragmented (a tenth of the HPC2N replay's time).
  mutable FreedUnits freed_;
};

}  // namespace trainyard
