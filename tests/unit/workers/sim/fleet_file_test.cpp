#include "workers/sim/fleet_file.h"

#include <gtest/gtest.h>

namespace trainyard::sim {
namespace {

TEST(FleetFileTest, TheDefaultFleetLoads) {
  auto fleet = LoadFleetFile(TRAINYARD_SOURCE_DIR "/payloads/fleets/default.json");
  ASSERT_TRUE(fleet.ok()) << fleet.status().message();
  EXPECT_EQ(fleet->name, "default");
  const CapacityPool* tpu = fleet->FindPool("us-central1-b/ct5p-hightpu-4t/ON_DEMAND/4x4x4");
  ASSERT_NE(tpu, nullptr);
  EXPECT_EQ(tpu->tpu_chips, 64);
  EXPECT_EQ(tpu->hosts_per_unit, 16);
  EXPECT_EQ(tpu->nodes(), 32);
  // The calendar-mode window is fixed relative to the fleet's epoch.
  Fleet copy = *fleet;
  copy.SetEpoch(FromUnixMicros(0));
  const CapacityPool* cal = copy.FindPool("us-central1-c/a3-megagpu-8g/RESERVATION/cal-a3m-uc1c");
  ASSERT_NE(cal, nullptr);
  EXPECT_EQ(cal->UnitsAvailableAt(FromUnixMicros(0), copy.epoch), 32);
  EXPECT_EQ(cal->UnitsAvailableAt(FromUnixMicros(0) + std::chrono::hours(24 * 15), copy.epoch), 0);
}

TEST(FleetFileTest, ElasticCpuAddsAnOnDemandAndASpotPoolToEveryZone) {
  auto fleet = LoadFleetFile(TRAINYARD_SOURCE_DIR "/payloads/fleets/default.json");
  ASSERT_TRUE(fleet.ok()) << fleet.status().message();
  for (const char* zone : {"us-central1-a", "us-central1-b", "us-central1-c"}) {
    for (const char* model : {"ON_DEMAND", "SPOT"}) {
      const CapacityPool* pool =
          fleet->FindPool(std::string(zone) + "/elastic-cpu/" + std::string(model));
      ASSERT_NE(pool, nullptr) << zone << " " << model;
      EXPECT_TRUE(pool->elastic);
      EXPECT_EQ(pool->nodes(), 0) << "no node rows: VMs exist while a job holds them";
      EXPECT_EQ(pool->region, "us-central1");
    }
  }
  auto plain = ParseFleet(R"({"zones": [{"zone": "us-central1-a", "pools": [
      {"machineType": "a3-megagpu-8g", "model": "ON_DEMAND", "nodes": 2}]}]})",
                          "f.json");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->pools.size(), 1u) << "off unless the fleet file asks";
  auto negative = ParseFleet(R"({"neverFitsTimeout": "-5s", "zones": [{"zone": "us-central1-a",
      "pools": [{"machineType": "a3-megagpu-8g", "model": "ON_DEMAND", "nodes": 2}]}]})",
                             "f.json");
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.status().message().find("neverFitsTimeout"), std::string::npos)
      << negative.status().message();
}

TEST(FleetFileTest, ABadFieldIsNamedByItsPath) {
  auto fleet = ParseFleet(R"({"zones": [{"zone": "us-central1-a", "pools": [
      {"machineType": "a3-megagpu-8g", "model": "ON_DEMAND", "nodes": 2},
      {"machineType": "a9-imaginary", "model": "SPOT", "nodes": 2}]}]})",
                          "f.json");
  ASSERT_FALSE(fleet.ok());
  EXPECT_EQ(fleet.status().message(),
            "fleet file f.json: zones[0].pools[1].machineType: unknown machine type "
            "\"a9-imaginary\"");
}

TEST(FleetFileTest, UnknownKeysAndMissingDwsStepsAreRefused) {
  EXPECT_FALSE(ParseFleet(R"({"zones": [], "typo": 1})", "f").ok());
  auto flex = ParseFleet(R"({"zones": [{"zone": "us-central1-a", "pools": [
      {"machineType": "a3-megagpu-8g", "model": "FLEX_START"}]}]})",
                         "f");
  ASSERT_FALSE(flex.ok());
  EXPECT_NE(flex.status().message().find("zones[0].pools[0].flexStart"), std::string::npos)
      << flex.status().message();
}

}  // namespace
}  // namespace trainyard::sim
