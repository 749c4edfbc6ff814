#include "services/fleet/availability_change.h"

#include <algorithm>

#include "services/fleet/spot_availability.h"

namespace trainyard {
namespace {

using std::chrono::duration_cast;
using std::chrono::microseconds;

void TakeEarlier(std::optional<Timestamp>& next, Timestamp at) {
  if (!next || at < *next) next = at;
}

// The next step of a history that repeats every kCapacityHorizon (UnitsAt's reading of it).
Timestamp NextStep(const std::vector<CapacityStep>& steps, Timestamp now, Timestamp epoch) {
  if (now < epoch) return epoch;
  const Duration since = now - epoch;
  const int64_t lap = since / kCapacityHorizon;
  const Duration into = since % kCapacityHorizon;
  auto after = std::upper_bound(steps.begin(), steps.end(), into,
                                [](Duration v, const CapacityStep& s) { return v < s.after; });
  const Duration at = after != steps.end() ? lap * kCapacityHorizon + after->after
                                           : (lap + 1) * kCapacityHorizon + steps.front().after;
  // Rounded up: UnitsAt reads a step from its own instant on.
  return epoch + duration_cast<microseconds>(at + microseconds(1) - Duration{1});
}

}  // namespace

std::optional<Timestamp> NextAvailabilityChange(const CapacityPool& pool, Timestamp now,
                                                Timestamp epoch) {
  std::optional<Timestamp> next;
  if (pool.window_start && *pool.window_start > now) TakeEarlier(next, *pool.window_start);
  if (pool.window_end && *pool.window_end > now) TakeEarlier(next, *pool.window_end);
  if (!pool.capacity_steps.empty()) TakeEarlier(next, NextStep(pool.capacity_steps, now, epoch));
  return next;
}

}  // namespace trainyard
