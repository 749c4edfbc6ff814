#include "services/model/consumption_model.h"

namespace trainyard {

std::string_view ConsumptionModelName(ConsumptionModel model) {
  switch (model) {
    case ConsumptionModel::kReservation:
      return "RESERVATION";
    case ConsumptionModel::kOnDemand:
      return "ON_DEMAND";
    case ConsumptionModel::kSpot:
      return "SPOT";
    case ConsumptionModel::kFlexStart:
      return "FLEX_START";
  }
  return "";
}

std::optional<ConsumptionModel> ParseConsumptionModel(std::string_view name) {
  for (auto m : {ConsumptionModel::kReservation, ConsumptionModel::kOnDemand,
                 ConsumptionModel::kSpot, ConsumptionModel::kFlexStart}) {
    if (ConsumptionModelName(m) == name) return m;
  }
  return std::nullopt;
}

}  // namespace trainyard
