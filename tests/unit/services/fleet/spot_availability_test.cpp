#include "services/fleet/spot_availability.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>

namespace trainyard {
namespace {

using namespace std::chrono_literals;

double Hours(Duration d) { return std::chrono::duration<double, std::ratio<3600>>(d).count(); }

TEST(SpotAvailabilityTest, TheSameSeedAndPoolGiveTheSameHistoryAndAnotherSeedAnother) {
  SpotAvailability a;
  auto one = DrawSpotCapacity(7, "us-central1-a/a3-megagpu-8g/SPOT", 16, a);
  auto again = DrawSpotCapacity(7, "us-central1-a/a3-megagpu-8g/SPOT", 16, a);
  auto other_seed = DrawSpotCapacity(8, "us-central1-a/a3-megagpu-8g/SPOT", 16, a);
  auto other_pool = DrawSpotCapacity(7, "us-central1-b/a3-megagpu-8g/SPOT", 16, a);
  ASSERT_EQ(one.size(), again.size());
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i].after, again[i].after);
    EXPECT_EQ(one[i].units, again[i].units);
  }
  EXPECT_NE(one[1].after, other_seed[1].after);
  EXPECT_NE(one[1].after, other_pool[1].after) << "pools of one fleet are not in lockstep";
}

// Over two years the periods average what the pool asks, and what is left stays in its range.
TEST(SpotAvailabilityTest, PeriodsAverageTheirMeansAndSharesStayInTheirRange) {
  SpotAvailability a;
  a.mean_available = 4h;
  a.mean_constrained = 2h;
  a.share_low = 0.25;
  a.share_high = 0.5;
  auto steps = DrawSpotCapacity(3, "pool", 16, a);
  ASSERT_GT(steps.size(), 1000u);
  EXPECT_EQ(steps[0].after, Duration{});
  EXPECT_EQ(steps[0].units, 16);
  std::vector<double> up, down;
  for (size_t i = 1; i < steps.size(); ++i) {
    const double hours = Hours(steps[i].after - steps[i - 1].after);
    if (steps[i].units < 16) {
      up.push_back(hours);  // the period before a fall was available
      EXPECT_GE(steps[i].units, 4);
      EXPECT_LE(steps[i].units, 8);
    } else {
      down.push_back(hours);
      EXPECT_LT(steps[i - 1].units, 16) << "falls and recoveries alternate";
    }
  }
  auto mean = [](const std::vector<double>& v) {
    return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  };
  EXPECT_NEAR(mean(up), 4.0, 0.3);
  EXPECT_NEAR(mean(down), 2.0, 0.15);
}

TEST(SpotAvailabilityTest, UnitsAtFollowsTheStepsAndRepeatsAfterTheHorizon) {
  std::vector<CapacityStep> steps{{0s, 16}, {1h, 4}, {3h, 16}};
  EXPECT_EQ(UnitsAt(steps, 0s, 16), 16);
  EXPECT_EQ(UnitsAt(steps, 1h - 1s, 16), 16);
  EXPECT_EQ(UnitsAt(steps, 1h, 16), 4);
  EXPECT_EQ(UnitsAt(steps, 3h, 16), 16);
  EXPECT_EQ(UnitsAt(steps, kCapacityHorizon + 2h, 16), 4);
  EXPECT_EQ(UnitsAt({}, 2h, 16), 16) << "no availability: always all of it";
}

TEST(SpotAvailabilityTest, DropsInFindsOnlyFallsInsideTheWindow) {
  std::vector<CapacityStep> steps{{0s, 16}, {1h, 4}, {3h, 16}, {5h, 0}, {6h, 16}};
  auto drops = DropsIn(steps, 0s, 10h);
  ASSERT_EQ(drops.size(), 2u);
  EXPECT_EQ(drops[0].at, 1h);
  EXPECT_EQ(drops[0].units_left, 4);
  EXPECT_EQ(drops[1].at, 5h);
  EXPECT_EQ(drops[1].units_left, 0);
  EXPECT_NE(drops[0].period, drops[1].period);
  EXPECT_TRUE(DropsIn(steps, 1h + 1s, 5h).empty()) << "[from, to): 5h itself is the next window's";
  EXPECT_EQ(DropsIn(steps, 5h, 5h + 1s).size(), 1u);
  auto later = DropsIn(steps, kCapacityHorizon, kCapacityHorizon + 2h);
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].at, kCapacityHorizon + 1h);
}

// DropsIn searches the steps for the window: the same falls, in the same order and with the same
// periods, as a walk over every step of every lap, for windows anywhere in the history, across
// the horizon, and a minute long (as the failure simulator asks).
TEST(SpotAvailabilityTest, DropsInGivesWhatAWalkOverEveryStepGives) {
  SpotAvailability a;
  a.mean_available = 6h;
  a.mean_constrained = 1h;
  const std::vector<CapacityStep> steps = DrawSpotCapacity(11, "pool", 16, a);
  ASSERT_GT(steps.size(), 1000u);
  auto walk = [&](Duration from, Duration to) {
    std::vector<CapacityDrop> out;
    const int64_t laps = to / kCapacityHorizon + 1;
    for (int64_t lap = 0; lap <= laps; ++lap) {
      for (size_t i = 1; i < steps.size(); ++i) {
        const Duration at = lap * kCapacityHorizon + steps[i].after;
        if (at < from || at >= to || steps[i].units >= steps[i - 1].units) continue;
        out.push_back({at, steps[i].units,
                       lap * static_cast<int64_t>(steps.size()) + static_cast<int64_t>(i)});
      }
    }
    return out;
  };
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<int64_t> minute(0, 2 * 730 * 24 * 60);
  std::uniform_int_distribution<int64_t> length(1, 3 * 24 * 60);
  int64_t found = 0;
  for (int k = 0; k < 400; ++k) {
    const Duration from = std::chrono::minutes(minute(rng));
    const Duration to = from + std::chrono::minutes(k % 2 == 0 ? 1 : length(rng));
    const std::vector<CapacityDrop> got = DropsIn(steps, from, to);
    const std::vector<CapacityDrop> want = walk(from, to);
    ASSERT_EQ(got.size(), want.size()) << "window " << k;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].at, want[i].at);
      EXPECT_EQ(got[i].units_left, want[i].units_left);
      EXPECT_EQ(got[i].period, want[i].period);
    }
    found += static_cast<int64_t>(got.size());
  }
  EXPECT_GT(found, 100) << "the windows hold falls to compare";
  const Duration edge = kCapacityHorizon - 3h;
  EXPECT_EQ(DropsIn(steps, edge, edge + 6h).size(), walk(edge, edge + 6h).size());
}

}  // namespace
}  // namespace trainyard
