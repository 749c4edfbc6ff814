#include "services/cost/capacity_cost.h"

namespace trainyard::cost {

double PoolCostUsd(ConsumptionModel model, double price_per_node_hour, double node_seconds,
                   double busy_node_seconds) {
  const double billed = model == ConsumptionModel::kReservation ? node_seconds : busy_node_seconds;
  return billed / 3600 * price_per_node_hour;
}

std::optional<double> PerProductiveAcceleratorHour(double cost_usd,
                                                   double productive_accelerator_hours) {
  if (productive_accelerator_hours <= 0) return std::nullopt;
  return cost_usd / productive_accelerator_hours;
}

std::optional<double> PerProductiveAcceleratorHour(double cost_usd, Duration productive,
                                                   int64_t accelerators) {
  const double hours = std::chrono::duration<double, std::ratio<3600>>(productive).count();
  if (hours <= 0 || accelerators <= 0) return std::nullopt;
  return PerProductiveAcceleratorHour(cost_usd, hours * static_cast<double>(accelerators));
}

std::optional<double> PerProductiveAcceleratorHourMicros(int64_t cost_micros,
                                                         int64_t productive_accelerator_micros) {
  if (productive_accelerator_micros <= 0) return std::nullopt;
  // µ$ over accelerator-µs, scaled to dollars per accelerator-hour.
  return PerProductiveAcceleratorHour(static_cast<double>(cost_micros) / 1e6,
                                      static_cast<double>(productive_accelerator_micros) / 3.6e9);
}

}  // namespace trainyard::cost
