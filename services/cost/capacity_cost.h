#pragma once
// What capacity costs over a stretch of time, and what that buys: dollars for each
// accelerator-hour (GPU or TPU chip) that trained and kept its result. The admin view and
// /metrics (services/admin/), a job's costPerProductiveAcceleratorHourUsd and `simulate`'s report
// all divide the same way.
#include <cstdint>
#include <optional>

#include "services/model/consumption_model.h"
#include "services/time.h"

namespace trainyard::cost {

// What one pool's nodes cost over a run, in dollars: a reservation is paid for every node-hour
// it offered, used or not (a commitment); on-demand, spot and DWS nodes for the node-hours jobs
// held them.
double PoolCostUsd(ConsumptionModel model, double price_per_node_hour, double node_seconds,
                   double busy_node_seconds);

// Cost over the productive accelerator-hours it bought: nullopt before any.
std::optional<double> PerProductiveAcceleratorHour(double cost_usd,
                                                   double productive_accelerator_hours);
// The same for one job: its productive time × the accelerators its placement holds.
std::optional<double> PerProductiveAcceleratorHour(double cost_usd, Duration productive,
                                                   int64_t accelerators);
// The same from the micro-units storage sums: micro-dollars over accelerator-microseconds.
std::optional<double> PerProductiveAcceleratorHourMicros(int64_t cost_micros,
                                                         int64_t productive_accelerator_micros);

}  // namespace trainyard::cost
