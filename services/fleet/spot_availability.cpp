#include "services/fleet/spot_availability.h"

#include <algorithm>
#include <cmath>

#include "services/fleet/failure_model.h"

namespace trainyard {
namespace {

// An exponential holding time of mean `mean` from the uniform draw `u` in [0, 1), in whole
// seconds (times a clock can stamp exactly), at least a minute (the hazard tick: a shorter period
// could fall between two passes of the simulator).
Duration Holding(Duration mean, double u) {
  const double seconds = -std::log1p(-u) * std::chrono::duration<double>(mean).count();
  return std::max<Duration>(std::chrono::seconds(static_cast<int64_t>(seconds)), kHazardTick);
}

}  // namespace

std::vector<CapacityStep> DrawSpotCapacity(uint64_t seed, std::string_view pool_id, int units,
                                           const SpotAvailability& a) {
  std::vector<CapacityStep> steps{{Duration{}, units}};
  Duration t{};
  for (int64_t period = 0;; ++period) {
    // Each period takes three draws of its own: how long it is available, how long constrained,
    // and how much is left meanwhile.
    auto draw = [&](int64_t k) {
      return HazardDraw(seed, HazardStream::kSpotCapacity, pool_id, k, period);
    };
    t += Holding(a.mean_available, draw(0));
    if (t >= kCapacityHorizon) break;
    const double share = a.share_low + (a.share_high - a.share_low) * draw(2);
    const int left = std::clamp(static_cast<int>(std::floor(share * units)), 0, units);
    steps.push_back({t, left});
    t += Holding(a.mean_constrained, draw(1));
    if (t >= kCapacityHorizon) break;
    steps.push_back({t, units});
  }
  return steps;
}

std::vector<CapacityDrop> DropsIn(const std::vector<CapacityStep>& steps, Duration from,
                                  Duration to) {
  std::vector<CapacityDrop> drops;
  if (steps.empty() || to <= from) return drops;
  const int64_t first_lap = std::max<int64_t>(0, from / kCapacityHorizon);
  const int64_t last_lap = (to - Duration{1}) / kCapacityHorizon;
  for (int64_t lap = first_lap; lap <= last_lap; ++lap) {
    const Duration base = lap * kCapacityHorizon;
    // The steps' times ascend: search for the window's first instead of walking two years of
    // them (the failure simulator asks for every minute it draws).
    auto first = std::lower_bound(steps.begin() + 1, steps.end(), from - base,
                                  [](const CapacityStep& s, Duration t) { return s.after < t; });
    for (size_t i = static_cast<size_t>(first - steps.begin());
         i < steps.size() && base + steps[i].after < to; ++i) {
      if (steps[i].units >= steps[i - 1].units) continue;
      drops.push_back({base + steps[i].after, steps[i].units,
                       lap * static_cast<int64_t>(steps.size()) + static_cast<int64_t>(i)});
    }
  }
  return drops;
}

int UnitsAt(const std::vector<CapacityStep>& steps, Duration since_epoch, int units) {
  if (steps.empty() || since_epoch < Duration{}) return units;
  const Duration t = since_epoch % kCapacityHorizon;
  auto after = std::upper_bound(steps.begin(), steps.end(), t,
                                [](Duration v, const CapacityStep& s) { return v < s.after; });
  return after == steps.begin() ? units : std::prev(after)->units;
}

}  // namespace trainyard
