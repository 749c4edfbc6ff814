#pragma once
// What a persistent resource costs: it bills its nodes from its placement to its deletion. Its
// record keeps what earlier holds cost and the current hold's hourly price and start (held_since);
// a resize closes the hold at the old price and opens one at the new, a deletion closes the last
// (its whole cost stays in resource_costs_ended).
#include <cstdint>
#include <optional>

#include "services/time.h"

namespace trainyard::cost {

// What the current hold has cost by `now`, rounded as AccruedMicros: nothing while the resource
// holds no nodes (no `held_since`) or `now` is not after `held_since`.
int64_t HoldCostMicros(int64_t hourly_price_micros, std::optional<Timestamp> held_since,
                       Timestamp now);

// Its whole cost by `now`: earlier holds plus the current one.
int64_t ResourceCostMicros(int64_t earlier_holds_micros, int64_t hourly_price_micros,
                           std::optional<Timestamp> held_since, Timestamp now);

}  // namespace trainyard::cost
