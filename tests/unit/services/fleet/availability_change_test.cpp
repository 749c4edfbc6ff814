// NextAvailabilityChange: the next instant a pool's offer may move, which a replay sleeps until.
// Checked against UnitsAvailableAt itself: the offer is the same up to that instant.
#include "services/fleet/availability_change.h"

#include <gtest/gtest.h>

#include "services/fleet/spot_availability.h"

namespace trainyard {
namespace {

using namespace std::chrono_literals;

const Timestamp kEpoch = FromUnixMicros(1'767'225'600'000'000);
// The capacity history's lap, as a Timestamp's unit.
const auto kLap = std::chrono::duration_cast<std::chrono::microseconds>(kCapacityHorizon);

TEST(AvailabilityChangeTest, AnUnchangingPoolNeverChanges) {
  CapacityPool pool;
  pool.units = 4;
  EXPECT_FALSE(NextAvailabilityChange(pool, kEpoch + 1h, kEpoch).has_value());
}

TEST(AvailabilityChangeTest, CalendarWindowOpensThenCloses) {
  CapacityPool pool;
  pool.units = 4;
  pool.window_start = kEpoch + 2h;
  pool.window_end = kEpoch + 5h;
  EXPECT_EQ(NextAvailabilityChange(pool, kEpoch, kEpoch), kEpoch + 2h);
  EXPECT_EQ(NextAvailabilityChange(pool, kEpoch + 2h, kEpoch), kEpoch + 5h);
  EXPECT_FALSE(NextAvailabilityChange(pool, kEpoch + 5h, kEpoch).has_value());
}

TEST(AvailabilityChangeTest, CapacityStepsAgreeWithWhatThePoolOffers) {
  CapacityPool pool;
  pool.model = ConsumptionModel::kOnDemand;
  pool.units = 10;
  pool.capacity_steps = {{0s, 10}, {3h, 4}, {5h, 10}, {11h + 30min, 6}};
  // From anywhere in the first lap and across the seam to the next, the offer holds until the
  // change.
  auto check = [&](Timestamp from, Timestamp to) {
    for (Timestamp now = from; now < to; now += 37min) {
      auto next = NextAvailabilityChange(pool, now, kEpoch);
      ASSERT_TRUE(next.has_value());
      ASSERT_GT(*next, now);
      EXPECT_EQ(pool.UnitsAvailableAt(*next - 1us, kEpoch), pool.UnitsAvailableAt(now, kEpoch))
          << (now - kEpoch).count();
    }
  };
  check(kEpoch, kEpoch + 13h);
  check(kEpoch + kLap - 1h, kEpoch + kLap + 13h);
  EXPECT_EQ(NextAvailabilityChange(pool, kEpoch + 4h, kEpoch), kEpoch + 5h);
  EXPECT_EQ(NextAvailabilityChange(pool, kEpoch + 12h, kEpoch), kEpoch + kLap);
}

}  // namespace
}  // namespace trainyard
