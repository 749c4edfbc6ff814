#include "services/fleet/zone_capacity.h"

#include <gtest/gtest.h>

#include "services/fleet/fleet.h"
#include "tests/unit/services/fleet/shared_zone_fleet.h"

namespace trainyard {
namespace {

using namespace std::chrono_literals;

// The share of [0, horizon) sampled each 10 minutes in which two zones' capacities are equal.
double TimeAlike(const std::vector<CapacityStep>& a, const std::vector<CapacityStep>& b) {
  int same = 0, samples = 0;
  for (Duration t{}; t < kCapacityHorizon / 4; t += 10min, ++samples) {
    same += UnitsAt(a, t, 16) == UnitsAt(b, t, 16);
  }
  return static_cast<double>(same) / samples;
}

std::vector<CapacityStep> Zone(const char* zone, double correlation) {
  SpotAvailability outside{
      .mean_available = 4h, .mean_constrained = 2h, .share_low = 0, .share_high = 0.5};
  return DrawZoneCapacity(7, "us-central1", zone, "a3-megagpu-8g", 16, outside, correlation);
}

// zoneCorrelation 1 moves the zones of a region together; 0 leaves them independent; in between,
// they are alike for longer the higher it is.
TEST(ZoneCapacityTest, CorrelationOneMovesTheZonesOfARegionTogether) {
  const auto a1 = Zone("us-central1-a", 1), b1 = Zone("us-central1-b", 1);
  ASSERT_EQ(a1.size(), b1.size());
  for (size_t i = 0; i < a1.size(); ++i) {
    EXPECT_EQ(a1[i].after, b1[i].after);
    EXPECT_EQ(a1[i].units, b1[i].units);
  }
  const double none = TimeAlike(Zone("us-central1-a", 0), Zone("us-central1-b", 0));
  const double half = TimeAlike(Zone("us-central1-a", 0.5), Zone("us-central1-b", 0.5));
  const double most = TimeAlike(Zone("us-central1-a", 0.9), Zone("us-central1-b", 0.9));
  EXPECT_LT(none, half);
  EXPECT_LT(half, most);
  EXPECT_LT(most, 1.0);
  // Independent zones are alike only when both are whole (each about 2/3 of the time).
  EXPECT_NEAR(none, 0.47, 0.1);
}

// Spot gets what on-demand leaves of the zone: the more this fleet's on-demand holds, the less.
TEST(ZoneCapacityTest, SpotShrinksAsOnDemandRises) {
  ZoneCapacity zone;
  zone.units = 10;
  zone.steps = {{Duration{}, 10}, {2h, 6}};
  EXPECT_EQ(SpotUnitsLeft(zone, 8, 1h, 0), 8) << "at most the spot pool's own units";
  EXPECT_EQ(SpotUnitsLeft(zone, 8, 1h, 4), 6);
  EXPECT_EQ(SpotUnitsLeft(zone, 8, 1h, 10), 0);
  EXPECT_EQ(SpotUnitsLeft(zone, 8, 3h, 4), 2) << "outside demand took 4 of the zone's 10";
}

// A fleet links a zone's capacity to its on-demand and spot pools of the type, and caps both.
TEST(ZoneCapacityTest, TheFleetSharesTheZonesCapacityBetweenItsPools) {
  Fleet fleet = test::SharedZoneFleet(8, 10);
  const Timestamp t0 = FromUnixMicros(1'800'000'000'000'000);
  fleet.SetEpoch(t0);
  EXPECT_EQ(fleet.zone_capacity[0].on_demand_pool, 0);
  EXPECT_EQ(fleet.zone_capacity[0].spot_pool, 1);
  EXPECT_EQ(fleet.UnitsOffered(0, t0 + 1h, {6, 0}), 8) << "on-demand draws first";
  EXPECT_EQ(fleet.UnitsOffered(1, t0 + 1h, {0, 0}), 8);
  EXPECT_EQ(fleet.UnitsOffered(1, t0 + 1h, {6, 0}), 4) << "spot gets what is left";
}

}  // namespace
}  // namespace trainyard
