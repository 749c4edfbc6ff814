#pragma once
// How much capacity a spot or on-demand pool offers over time: a seeded two-state process per
// pool. Spare capacity comes and goes: in an *available* period the pool offers all its units; in
// a *constrained* one only a share of them, drawn per period. For spot, the nodes beyond it are
// reclaimed together (each with the fleet's spot notice) when the period begins; for on-demand it
// is a stockout: running VMs stay, and new ones are had only up to the share, so a bigger request,
// or one in a busier pool, meets it more often. Holding times are
// exponential with the pool's means. Drawn from (fleet seed, pool id) alone, so the same fleet
// file gives the same history in `serve` and in `simulate`.
//
// Why two states and correlated reclaims: co-interruptions of one instance type in one zone come
// within three minutes of each other in over 92% of 2,635 observed interruptions (Spot-and-Scoot,
// 2026, AWS and Azure), which is why availability is modelled as on/off rather than as
// independent per-node hazards. The default means are from the Can't Be Late (NSDI'24) traces;
// docs/capacity-model.md has the figures and how they were read.
#include <cstdint>
#include <string_view>
#include <vector>

#include "services/time.h"

namespace trainyard {

struct SpotAvailability {
  Duration mean_available = std::chrono::hours(4);
  Duration mean_constrained = std::chrono::hours(2);
  // The share of the pool's units left in a constrained period, drawn uniformly in [low, high].
  double share_low = 0;
  double share_high = 0.5;
};

// The units a pool offers from `after` (counted from the fleet's epoch) until the next step.
struct CapacityStep {
  Duration after{};
  int units = 0;
};

// The draws cover this much time from the epoch; after it the history repeats.
inline constexpr Duration kCapacityHorizon = std::chrono::hours(24 * 730);

// The pool's steps over [0, kCapacityHorizon): the first is {0, units} (a fleet starts with its
// spot capacity there), then alternately a constrained period's units and all of them again.
std::vector<CapacityStep> DrawSpotCapacity(uint64_t seed, std::string_view pool_id, int units,
                                           const SpotAvailability& availability);

// A fall of the pool's capacity: at `at` (from the epoch) only `units_left` remain. `period`
// numbers it for the draw of which nodes go.
struct CapacityDrop {
  Duration at{};
  int units_left = 0;
  int64_t period = 0;
};
// The falls in [from, to), both counted from the epoch, in order.
std::vector<CapacityDrop> DropsIn(const std::vector<CapacityStep>& steps, Duration from,
                                  Duration to);

// The units `steps` offer at `since_epoch` (repeating after kCapacityHorizon); `units` before any.
int UnitsAt(const std::vector<CapacityStep>& steps, Duration since_epoch, int units);

}  // namespace trainyard
