#include "services/cost/capacity_cost.h"

#include <gtest/gtest.h>

namespace trainyard::cost {
namespace {

using std::chrono::hours;
using std::chrono::minutes;

TEST(CapacityCostTest, AReservationIsPaidForEveryNodeHourItOffersUsedOrNot) {
  const double offered = 2 * 3600.0, busy = 3600.0;  // two node-hours offered, one used
  EXPECT_DOUBLE_EQ(PoolCostUsd(ConsumptionModel::kReservation, 10, offered, busy), 20);
  EXPECT_DOUBLE_EQ(PoolCostUsd(ConsumptionModel::kOnDemand, 10, offered, busy), 10);
  EXPECT_DOUBLE_EQ(PoolCostUsd(ConsumptionModel::kSpot, 4, offered, busy), 4);
  EXPECT_DOUBLE_EQ(PoolCostUsd(ConsumptionModel::kFlexStart, 5, offered, busy), 5);
}

TEST(CapacityCostTest, CostPerProductiveAcceleratorHourIsCostOverTheHoursThatTrainedAndKept) {
  EXPECT_DOUBLE_EQ(*PerProductiveAcceleratorHour(32.0, 16.0), 2.0);
  EXPECT_FALSE(PerProductiveAcceleratorHour(32.0, 0.0)) << "nothing productive yet: no figure";
  // One job: its productive time × the accelerators it holds.
  EXPECT_DOUBLE_EQ(*PerProductiveAcceleratorHour(32.0, hours(2), 8), 2.0) << "$32 over 16 GPU-h";
  EXPECT_DOUBLE_EQ(*PerProductiveAcceleratorHour(6.08, minutes(10), 8), 6.08 / (600.0 / 3600 * 8));
  EXPECT_FALSE(PerProductiveAcceleratorHour(32.0, Duration{}, 8));
  EXPECT_FALSE(PerProductiveAcceleratorHour(32.0, hours(2), 0)) << "no countable accelerators";
  // As storage sums them: micro-dollars over accelerator-microseconds.
  EXPECT_DOUBLE_EQ(*PerProductiveAcceleratorHourMicros(4'560'000, 3'600'000'000), 4.56);
  EXPECT_FALSE(PerProductiveAcceleratorHourMicros(4'560'000, 0));
}

}  // namespace
}  // namespace trainyard::cost
