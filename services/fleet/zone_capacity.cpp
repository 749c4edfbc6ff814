#include "services/fleet/zone_capacity.h"

#include <algorithm>

#include "services/fleet/failure_model.h"

namespace trainyard {

std::vector<CapacityStep> DrawZoneCapacity(uint64_t seed, std::string_view region,
                                           std::string_view zone, std::string_view machine_type,
                                           int units, const SpotAvailability& outside,
                                           double correlation) {
  const std::string region_key = std::string(region) + "/" + std::string(machine_type);
  const std::string zone_key = std::string(zone) + "/" + std::string(machine_type);
  const std::vector<CapacityStep> shared = DrawSpotCapacity(seed, region_key, units, outside);
  if (correlation >= 1) return shared;
  const std::vector<CapacityStep> own = DrawSpotCapacity(seed, zone_key, units, outside);
  if (correlation <= 0) return own;
  std::vector<CapacityStep> steps;
  auto push = [&](Duration at, int value) {
    if (!steps.empty() && steps.back().units == value) return;
    steps.push_back({at, value});
  };
  for (size_t i = 0; i < shared.size(); ++i) {
    const Duration from = shared[i].after;
    const Duration to = i + 1 < shared.size() ? shared[i + 1].after : kCapacityHorizon;
    const bool follows_region = HazardDraw(seed, HazardStream::kZoneCorrelation, zone_key, 0,
                                           static_cast<int64_t>(i)) < correlation;
    if (follows_region) {
      push(from, shared[i].units);
      continue;
    }
    push(from, UnitsAt(own, from, units));
    for (const CapacityStep& step : own) {
      if (step.after > from && step.after < to) push(step.after, step.units);
    }
  }
  return steps;
}

int64_t SpotUnitsLeft(const ZoneCapacity& zone, int spot_units, Duration since_epoch,
                      int64_t on_demand_units) {
  const int64_t left = UnitsAt(zone.steps, since_epoch, zone.units) - on_demand_units;
  return std::clamp<int64_t>(left, 0, spot_units);
}

}  // namespace trainyard
