#pragma once
// How the simulated fleet fails, as pure functions: seeded hazard draws for spot preemptions and
// node failures, and what a spot preemption does to its job (Vertex: STOCKOUT, restarted up to 6
// times). The simulator (workers/failure_simulator) applies them in virtual time.
//
// A draw depends only on (fleet seed, stream, pool, ordinal, tick), never on when or how often
// the simulator runs, so the same fleet file and the same workload replay the same failures.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "services/time.h"

namespace trainyard {

// Hazards are drawn once per node per tick of virtual time; tick k covers
// [epoch + k·kHazardTick, epoch + (k+1)·kHazardTick) and a hit takes effect at the tick's end.
inline constexpr Duration kHazardTick = std::chrono::seconds(60);
// Vertex restarts a job whose spot capacity was reclaimed (STOCKOUT) up to 6 times.
inline constexpr int kMaxSpotRestarts = 6;
// A reclaimed spot VM stays PREEMPTED (out of service) this long before its slot is given back.
inline constexpr Duration kPreemptedLinger = std::chrono::seconds(60);

// Independent random streams drawn from one fleet seed.
enum class HazardStream : uint64_t {
  kSpotPreemption = 1,
  kNodeFailure = 2,
  kInjectionPick = 3,  // which nodes an injected preemption hits
  kSpotCapacity = 4,   // when a spot pool's capacity falls and comes back, and how far
  kSpotShrink = 5,     // which nodes go when it falls
  kStartupBoot = 6,    // how long an admission's nodes take to boot (services/fleet/startup_model)
  kStartupPull = 7,    // and to pull its image
  kRepair = 8,         // how long a failed node takes to repair (services/fleet/startup_model)
  kDwsWait = 9,        // where a DWS request's wait falls around its median (dws_queue_model)
  kDwsOutsideDemand = 10,  // the outside demand ahead of it
  kZoneCorrelation = 11,   // whether a zone's period follows its region's (zone_capacity)
};

// A uniform value in [0, 1) determined by its inputs alone.
double HazardDraw(uint64_t seed, HazardStream stream, std::string_view pool_id, int64_t ordinal,
                  int64_t tick);

// Probability that a node with `per_node_hour` events per node-hour has one within `tick`
// (a Poisson process: 1 - e^(-rate·t)).
double TickProbability(double per_node_hour, Duration tick = kHazardTick);

// Number of ticks completed at `now` (the last completed tick is this minus one); 0 before epoch.
int64_t CompletedTicks(Timestamp epoch, Timestamp now);
Timestamp TickEnd(Timestamp epoch, int64_t tick);

// The first tick in [first, last] in which a node is hit; nullopt when none (or no hazard).
std::optional<int64_t> FirstHit(uint64_t seed, HazardStream stream, std::string_view pool_id,
                                int64_t ordinal, double per_node_hour, int64_t first, int64_t last);

// What happens to a job whose spot node was reclaimed after `restarts_so_far` earlier restarts.
struct SpotPreemptionOutcome {
  bool restart = false;  // back to the queue; else FAILED
  int restart_number = 0;
  std::string message;  // the job's reason (restart) or error message (failure)
};
SpotPreemptionOutcome AfterSpotPreemption(int restarts_so_far, bool disable_retries,
                                          std::string_view node_name);

}  // namespace trainyard
