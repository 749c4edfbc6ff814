#include "services/cost/resource_cost.h"

#include "services/cost/accrual.h"

namespace trainyard::cost {

int64_t HoldCostMicros(int64_t hourly_price_micros, std::optional<Timestamp> held_since,
                       Timestamp now) {
  if (!held_since || now <= *held_since) return 0;
  return AccruedMicros(hourly_price_micros, now - *held_since);
}

int64_t ResourceCostMicros(int64_t earlier_holds_micros, int64_t hourly_price_micros,
                           std::optional<Timestamp> held_since, Timestamp now) {
  return earlier_holds_micros + HoldCostMicros(hourly_price_micros, held_since, now);
}

}  // namespace trainyard::cost
