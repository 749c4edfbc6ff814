// Clocks: how long a loop must sleep for virtual time to reach a moment.
#include "services/clock.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

using namespace std::chrono_literals;

TEST(ClockTest, WallTimeIsVirtualTimeForTheSystemClock) {
  EXPECT_EQ(SystemClock().WallFor(30s), std::chrono::microseconds(30'000'000));
}

TEST(ClockTest, AScaledClockSleepsSpeedTimesLess) {
  ScaledClock fast(FromUnixMicros(0), FromUnixMicros(0), 1000);
  EXPECT_EQ(fast.WallFor(30s), std::chrono::microseconds(30'000));  // 30 virtual s = 30 ms
  ScaledClock slow(FromUnixMicros(0), FromUnixMicros(0), 0.5);
  EXPECT_EQ(slow.WallFor(1s), std::chrono::microseconds(2'000'000));
  EXPECT_LT(fast.WallFor(-5s).count(), 0);  // a moment already past: the caller does not wait
}

}  // namespace
}  // namespace trainyard
