// The seeded hazard draws and the spot restart rule, without a database.
#include "services/fleet/failure_model.h"

#include <gtest/gtest.h>

#include "api/wire/fleet_codec.h"
#include "services/fleet/fault_injection.h"

namespace trainyard {
namespace {

constexpr const char* kPool = "us-central1-a/a3-megagpu-8g/SPOT";

TEST(HazardDrawTest, DependsOnlyOnItsInputs) {
  double a = HazardDraw(7, HazardStream::kSpotPreemption, kPool, 3, 1000);
  EXPECT_EQ(a, HazardDraw(7, HazardStream::kSpotPreemption, kPool, 3, 1000));
  EXPECT_GE(a, 0.0);
  EXPECT_LT(a, 1.0);
  EXPECT_NE(a, HazardDraw(8, HazardStream::kSpotPreemption, kPool, 3, 1000)) << "seed";
  EXPECT_NE(a, HazardDraw(7, HazardStream::kNodeFailure, kPool, 3, 1000)) << "stream";
  EXPECT_NE(a, HazardDraw(7, HazardStream::kSpotPreemption, kPool, 4, 1000)) << "node";
  EXPECT_NE(a, HazardDraw(7, HazardStream::kSpotPreemption, kPool, 3, 1001)) << "tick";
}

TEST(HazardDrawTest, HitsAtThePoolsRate) {
  // 0.5 preemptions per node-hour over 64 nodes × 10,000 one-minute ticks: 5,333 expected.
  double p = TickProbability(0.5);
  EXPECT_NEAR(p, 1 - std::exp(-0.5 / 60), 1e-12);
  int hits = 0;
  for (int node = 0; node < 64; ++node) {
    for (int tick = 0; tick < 10000; ++tick) {
      hits += HazardDraw(1, HazardStream::kSpotPreemption, kPool, node, tick) < p;
    }
  }
  double expected = 64 * 10000 * p;
  EXPECT_NEAR(hits, expected, 4 * std::sqrt(expected));
}

TEST(HazardDrawTest, FirstHitDoesNotDependOnHowTheTicksAreSplit) {
  auto whole = FirstHit(7, HazardStream::kSpotPreemption, kPool, 0, 2.0, 0, 5000);
  ASSERT_TRUE(whole);
  std::optional<int64_t> pieces;
  for (int64_t from = 0; from <= 5000 && !pieces; from += 7) {
    pieces = FirstHit(7, HazardStream::kSpotPreemption, kPool, 0, 2.0, from,
                      std::min<int64_t>(from + 6, 5000));
  }
  EXPECT_EQ(whole, pieces);
  EXPECT_FALSE(FirstHit(7, HazardStream::kSpotPreemption, kPool, 0, 0.0, 0, 5000))
      << "no hazard, no hit";
}

TEST(HazardDrawTest, TicksCountFromTheEpoch) {
  Timestamp epoch = FromUnixMicros(1'800'000'000'000'000);
  EXPECT_EQ(CompletedTicks(epoch, epoch), 0);
  EXPECT_EQ(CompletedTicks(epoch, epoch + std::chrono::seconds(59)), 0);
  EXPECT_EQ(CompletedTicks(epoch, epoch + std::chrono::seconds(60)), 1);
  EXPECT_EQ(CompletedTicks(epoch, epoch - std::chrono::seconds(60)), 0);
  EXPECT_EQ(TickEnd(epoch, 0), epoch + std::chrono::seconds(60));
}

TEST(SpotPreemptionOutcomeTest, RestartsSixTimesThenFails) {
  SpotPreemptionOutcome first = AfterSpotPreemption(0, false, "n-0001");
  EXPECT_TRUE(first.restart);
  EXPECT_EQ(first.restart_number, 1);
  EXPECT_EQ(first.message,
            "spot capacity reclaimed (node n-0001); restart 1 of 6, back in the queue");
  EXPECT_TRUE(AfterSpotPreemption(5, false, "n").restart);
  SpotPreemptionOutcome seventh = AfterSpotPreemption(6, false, "n-0001");
  EXPECT_FALSE(seventh.restart);
  EXPECT_EQ(seventh.message.rfind("STOCKOUT: ", 0), 0u);
  EXPECT_FALSE(AfterSpotPreemption(0, true, "n").restart) << "disableRetries";
}

class FaultInjectionValidationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto fleet = ParseFleet(R"({"zones": [
      {"zone": "us-central1-a", "pools": [
        {"machineType": "a3-megagpu-8g", "model": "SPOT", "nodes": 2},
        {"machineType": "a3-megagpu-8g", "model": "ON_DEMAND", "nodes": 2}]},
      {"zone": "us-central1-b", "pools": [
        {"machineType": "a3-highgpu-8g", "model": "ON_DEMAND", "nodes": 2}]}]})",
                            "test");
    ASSERT_TRUE(fleet.ok()) << fleet.status().message();
    fleet_ = *fleet;
  }
  std::string Field(const FaultInjection& r) {
    Status s = ValidateFaultInjection(fleet_, r);
    if (s.ok()) return "ok";
    return s.message().substr(0, s.message().find(':'));
  }
  Fleet fleet_;
};

TEST_F(FaultInjectionValidationTest, NamesTheBadField) {
  FaultInjection fail;
  fail.kind = FaultKind::kNodeFailure;
  EXPECT_EQ(Field(fail), "node") << "required";
  fail.node = "us-central1-a-a3-megagpu-8g-ON_DEMAND-0001";
  EXPECT_EQ(Field(fail), "ok");
  fail.node = "us-central1-a-a3-megagpu-8g-ON_DEMAND-0002";
  EXPECT_EQ(Field(fail), "node") << "past the pool's last node";

  FaultInjection spot;
  spot.kind = FaultKind::kSpotPreemption;
  EXPECT_EQ(Field(spot), "pool") << "no target";
  spot.pool_id = "us-central1-a/a3-megagpu-8g/SPOT";
  EXPECT_EQ(Field(spot), "ok");
  spot.fraction = 1.5;
  EXPECT_EQ(Field(spot), "fraction");
  spot.fraction = 0.5;
  spot.count = 1;
  EXPECT_EQ(Field(spot), "fraction") << "count and fraction";
  spot.fraction.reset();
  spot.count = 0;
  EXPECT_EQ(Field(spot), "count");
  spot.count.reset();
  spot.pool_id = "us-central1-a/a3-megagpu-8g/ON_DEMAND";
  EXPECT_EQ(Field(spot), "pool") << "not spot";
  spot.pool_id.clear();
  spot.zone = "us-central1-b";
  EXPECT_EQ(Field(spot), "zone") << "no spot pool there";
  spot.zone = "us-central1-a";
  EXPECT_EQ(Field(spot), "ok");
  spot.node = "us-central1-a-a3-megagpu-8g-SPOT-0000";
  EXPECT_EQ(Field(spot), "node") << "two targets";
}

TEST(FindNodeTest, FindsANodeByItsPlacementName) {
  auto fleet = ParseFleet(R"({"zones": [{"zone": "us-central1-a", "pools": [
      {"machineType": "a3-megagpu-8g", "model": "SPOT", "nodes": 12}]}]})",
                          "test");
  ASSERT_TRUE(fleet.ok());
  auto found = FindNode(*fleet, "us-central1-a-a3-megagpu-8g-SPOT-0011");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->pool_id, kPool);
  EXPECT_EQ(found->ordinal, 11);
  EXPECT_FALSE(FindNode(*fleet, "us-central1-a-a3-megagpu-8g-SPOT-11"));
  EXPECT_FALSE(FindNode(*fleet, "nonsense"));
}

}  // namespace
}  // namespace trainyard
