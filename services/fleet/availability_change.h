#pragma once
// When a pool's offer over time (CapacityPool::UnitsAvailableAt) next moves: what lets a replay
// sleep through time in which no capacity opens or closes.
#include <optional>

#include "services/fleet/fleet.h"

namespace trainyard {

// The first time after `now` at which `pool`'s UnitsAvailableAt may answer otherwise than at
// `now`: a calendar window opening or closing, a capacity step (a stockout, a spot
// fall or rise). None: what it offers never changes again.
std::optional<Timestamp> NextAvailabilityChange(const CapacityPool& pool, Timestamp now,
                                                Timestamp epoch);

}  // namespace trainyard
