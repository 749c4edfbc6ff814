#pragma once
// What the tests of a zone's shared capacity start from (the fleet's and the scheduler's): one
// zone whose on-demand and spot pools draw from one capacity, with no outside demand.
#include <cstdint>
#include <string>

#include "services/fleet/fleet.h"

namespace trainyard::test {

// An on-demand then a spot pool of `pool_units` A3 Mega nodes each in us-central1-a, sharing the
// zone's `zone_units`. The epoch is left to the test (Fleet::SetEpoch links the capacity).
inline Fleet SharedZoneFleet(int64_t pool_units, int64_t zone_units) {
  Fleet fleet;
  for (ConsumptionModel model : {ConsumptionModel::kOnDemand, ConsumptionModel::kSpot}) {
    CapacityPool pool;
    pool.zone = "us-central1-a";
    pool.region = "us-central1";
    pool.machine_type = "a3-megagpu-8g";
    pool.model = model;
    pool.units = pool_units;
    pool.id = "us-central1-a/a3-megagpu-8g/" + std::string(ConsumptionModelName(model));
    fleet.pools.push_back(pool);
  }
  ZoneCapacity zone;
  zone.zone = "us-central1-a";
  zone.region = "us-central1";
  zone.machine_type = "a3-megagpu-8g";
  zone.units = zone_units;
  zone.outside_on_demand = {.share_low = 1, .share_high = 1};  // no outside demand
  fleet.zone_capacity.push_back(zone);
  return fleet;
}

}  // namespace trainyard::test
