#pragma once
// How Google sells a node-hour (Kueue's ResourceFlavor): what a fleet pool offers, what a
// placement holds, and what its price is discounted by (services/cost/price.h).
#include <optional>
#include <string_view>

namespace trainyard {

enum class ConsumptionModel : int {
  kReservation = 0,  // CUD reservation (1y/3y) or a DWS calendar-mode future reservation
  kOnDemand = 1,
  kSpot = 2,
  kFlexStart = 3,  // DWS flex-start: all nodes at once, when capacity appears
};

std::string_view ConsumptionModelName(ConsumptionModel model);  // "RESERVATION", "SPOT", …
std::optional<ConsumptionModel> ParseConsumptionModel(std::string_view name);

}  // namespace trainyard
