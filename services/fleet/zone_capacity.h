#pragma once
// One zone's capacity of a machine type, shared by on-demand and spot (docs/capacity-model.md,
// "One capacity for on-demand and spot"). Spot is the capacity on-demand does not use: the zone
// sells its nodes on demand first, to other customers and to this fleet, and spot gets what is
// left. So the zone's capacity over time is a seeded series of what other customers' on-demand
// leaves (the same two-state process as SpotAvailability: quiet periods with all of it, busy ones
// with a share), this fleet's on-demand pool gets at most that, and its spot pool at most that
// less what this fleet's on-demand holds: when on-demand demand rises, spot shrinks first.
//
// Zones of a region share their region's demand (a launch, a holiday season) and have their own
// (racks, maintenance): with `correlation` ρ each of the region's periods is, for a zone, the
// region's with probability ρ and the zone's own otherwise, so ρ = 1 moves every zone together
// and ρ = 0 leaves them independent.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "services/fleet/spot_availability.h"
#include "services/time.h"

namespace trainyard {

struct ZoneCapacity {
  std::string zone;
  std::string region;
  std::string machine_type;
  int units = 0;  // what the zone can sell this fleet when other customers' demand is low
  // When other customers' on-demand demand rises (a constrained period) and what it leaves.
  SpotAvailability outside_on_demand;
  // Drawn by Fleet::SetEpoch, with the zone's pools of the type (-1: none).
  std::vector<CapacityStep> steps;
  int on_demand_pool = -1;
  int spot_pool = -1;
};

// The zone's units over [0, kCapacityHorizon), as DrawSpotCapacity's steps: the region's history
// of (region, machine type) with probability `correlation` per region period, else the zone's own.
std::vector<CapacityStep> DrawZoneCapacity(uint64_t seed, std::string_view region,
                                           std::string_view zone, std::string_view machine_type,
                                           int units, const SpotAvailability& outside,
                                           double correlation);

// What this fleet's spot pool may hold at `since_epoch` when its on-demand pool in the zone holds
// `on_demand_units`: the zone's capacity left after both kinds of on-demand, at most `spot_units`.
int64_t SpotUnitsLeft(const ZoneCapacity& zone, int spot_units, Duration since_epoch,
                      int64_t on_demand_units);

}  // namespace trainyard
