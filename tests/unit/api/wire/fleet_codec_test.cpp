#include "api/wire/fleet_codec.h"

#include <gtest/gtest.h>

namespace trainyard {
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

TEST(FleetFileTest, NoPoolKeepsItsNodesBootedUnlessTheFileSaysSo) {
  auto fleet = ParseFleet(R"({"zones": [{"zone": "us-central1-a", "pools": [
      {"machineType": "a3-megagpu-8g", "model": "RESERVATION", "reservation": "r", "term": "1y",
       "nodes": 2},
      {"machineType": "a3-highgpu-8g", "model": "ON_DEMAND", "nodes": 2, "keepBooted": true}]}]})",
                          "test");
  ASSERT_TRUE(fleet.ok()) << fleet.status().message();
  ASSERT_EQ(fleet->pools.size(), 2u);
  EXPECT_FALSE(fleet->pools[0].keep_booted) << "a reservation guarantees capacity, not a VM";
  EXPECT_TRUE(fleet->pools[1].keep_booted);
  auto bad = ParseFleet(R"({"zones": [{"zone": "us-central1-a", "pools": [
      {"machineType": "a3-megagpu-8g", "model": "ON_DEMAND", "nodes": 2, "keepBooted": 1}]}]})",
                        "test");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("pools[0].keep_booted"), std::string::npos)
      << bad.status().message();
}

constexpr const char* kOnePool = R"("zones": [{"zone": "us-central1-a", "pools": [
    {"machineType": "a3-highgpu-8g", "model": "ON_DEMAND", "nodes": 1}]}])";

TEST(FleetFileTest, TheStartupSpreadIsReadAndARatioBelowOneIsRefused) {
  auto fleet = LoadFleetFile(TRAINYARD_SOURCE_DIR "/payloads/fleets/default.json");
  ASSERT_TRUE(fleet.ok()) << fleet.status().message();
  EXPECT_DOUBLE_EQ(fleet->startup_spread.boot_p95_ratio, 1.3);
  EXPECT_DOUBLE_EQ(fleet->startup_spread.pull_p95_ratio, 1.5);
  EXPECT_DOUBLE_EQ(fleet->startup_spread.tpu_slice_growth_per_doubling, 0.1);
  auto plain = ParseFleet(std::string("{") + kOnePool + "}", "test");
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_DOUBLE_EQ(plain->startup_spread.boot_p95_ratio, 1) << "no block: every node its figure";
  auto bad = ParseFleet(
      std::string(R"({"startupSpread": {"bootP95Ratio": 0.5}, )") + kOnePool + "}", "test");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("startupSpread.bootP95Ratio"), std::string::npos)
      << bad.status().message();
}

TEST(FleetFileTest, TheRepairTailAndTheProgramStartupAreRead) {
  auto fleet = LoadFleetFile(TRAINYARD_SOURCE_DIR "/payloads/fleets/default.json");
  ASSERT_TRUE(fleet.ok()) << fleet.status().message();
  EXPECT_EQ(fleet->repair_time, Duration(std::chrono::seconds(900)));
  EXPECT_DOUBLE_EQ(fleet->startup_spread.repair_p95_ratio, 4);
  EXPECT_EQ(fleet->program_startup.base, Duration(std::chrono::seconds(60)));
  EXPECT_EQ(fleet->program_startup.per_doubling, Duration(std::chrono::seconds(10)));
  auto plain = ParseFleet(std::string("{") + kOnePool + "}", "test");
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_DOUBLE_EQ(plain->startup_spread.repair_p95_ratio, 1) << "no block: repairTime exactly";
  EXPECT_EQ(plain->program_startup.base, Duration::zero()) << "no block: the first step at once";
  auto bad = ParseFleet(
      std::string(R"({"programStartup": {"perDoubling": "-5s"}, )") + kOnePool + "}", "test");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("programStartup.perDoubling"), std::string::npos)
      << bad.status().message();
  auto low = ParseFleet(
      std::string(R"({"startupSpread": {"repairP95Ratio": 0.9}, )") + kOnePool + "}", "test");
  EXPECT_FALSE(low.ok());
}

TEST(FleetFileTest, EveryPoolOfTheDefaultFleetFailsAtThePublishedRatePerAccelerator) {
  auto fleet = LoadFleetFile(TRAINYARD_SOURCE_DIR "/payloads/fleets/default.json");
  ASSERT_TRUE(fleet.ok()) << fleet.status().message();
  // Llama 3's 419 interruptions in 54 days on 16,384 GPUs, per GPU-hour.
  EXPECT_NEAR(fleet->failures_per_accelerator_hour, 419.0 / (16384 * 54 * 24), 1e-8);
  const CapacityPool* gpu = fleet->FindPool("us-central1-b/a3-highgpu-8g/SPOT");
  ASSERT_NE(gpu, nullptr);
  EXPECT_DOUBLE_EQ(fleet->NodeFailureRate(*gpu), 8 * fleet->failures_per_accelerator_hour);
  const CapacityPool* tpu = fleet->FindPool("us-central1-b/ct5p-hightpu-4t/ON_DEMAND/4x4x4");
  ASSERT_NE(tpu, nullptr);
  EXPECT_DOUBLE_EQ(fleet->NodeFailureRate(*tpu), 4 * fleet->failures_per_accelerator_hour);
  // A pool's own rate wins, 0 included; a fleet without the key has no failures.
  auto own = ParseFleet(R"({"failuresPerAcceleratorHour": 0.001, "zones": [
      {"zone": "us-central1-a", "pools": [
        {"machineType": "a3-highgpu-8g", "model": "ON_DEMAND", "nodes": 1, "failuresPerNodeHour": 0},
        {"machineType": "a3-megagpu-8g", "model": "ON_DEMAND", "nodes": 1}]}]})",
                        "test");
  ASSERT_TRUE(own.ok()) << own.status().message();
  EXPECT_EQ(own->NodeFailureRate(own->pools[0]), 0);
  EXPECT_DOUBLE_EQ(own->NodeFailureRate(own->pools[1]), 0.008);
  auto none = ParseFleet(std::string("{") + kOnePool + "}", "test");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->NodeFailureRate(none->pools[0]), 0);
}

TEST(FleetFileTest, ASpotPoolsAvailabilityIsReadAndDrawnOnceTheEpochIsSet) {
  auto fleet = ParseFleet(R"({"seed": 5, "zones": [{"zone": "us-central1-a", "pools": [
      {"machineType": "a3-megagpu-8g", "model": "SPOT", "nodes": 8, "availability": {
        "meanAvailable": "14400s", "meanConstrained": "7200s", "minShareLeft": 0,
        "maxShareLeft": 0.5}}]}]})",
                          "test");
  ASSERT_TRUE(fleet.ok()) << fleet.status().message();
  const CapacityPool& spot = fleet->pools[0];
  ASSERT_TRUE(spot.availability.has_value());
  EXPECT_EQ(spot.availability->mean_available, std::chrono::hours(4));
  EXPECT_EQ(spot.availability->mean_constrained, std::chrono::hours(2));
  EXPECT_EQ(spot.availability->share_high, 0.5);
  EXPECT_TRUE(spot.capacity_steps.empty()) << "drawn from the final seed, at SetEpoch";
  fleet->SetEpoch(FromUnixMicros(0));
  ASSERT_GT(fleet->pools[0].capacity_steps.size(), 2u);
  const CapacityStep fall = fleet->pools[0].capacity_steps[1];
  EXPECT_LE(fall.units, 4);
  EXPECT_EQ(fleet->pools[0].UnitsAvailableAt(FromUnixMicros(0), fleet->epoch), 8);
  EXPECT_EQ(
      fleet->pools[0].UnitsAvailableAt(
          FromUnixMicros(0) + std::chrono::duration_cast<std::chrono::microseconds>(fall.after),
          fleet->epoch),
      fall.units);

  for (auto [availability, field] : {
           std::pair{R"({"meanAvailable": "10s"})", "availability.meanAvailable"},
           std::pair{R"({"minShareLeft": 0.6, "maxShareLeft": 0.5})", "availability.maxShareLeft"},
           std::pair{R"({"maxShareLeft": 2})", "availability.maxShareLeft"},
       }) {
    auto bad = ParseFleet(std::string(R"({"zones": [{"zone": "us-central1-a", "pools": [
        {"machineType": "a3-megagpu-8g", "model": "SPOT", "nodes": 8, "availability": )") +
                              availability + "}]}]}",
                          "test");
    ASSERT_FALSE(bad.ok()) << availability;
    EXPECT_NE(bad.status().message().find(field), std::string::npos) << bad.status().message();
  }
  auto not_spot = ParseFleet(R"({"zones": [{"zone": "us-central1-a", "pools": [
      {"machineType": "a3-megagpu-8g", "model": "RESERVATION", "reservation": "r", "term": "1y",
       "nodes": 2, "availability": {}}]}]})",
                             "test");
  ASSERT_FALSE(not_spot.ok());
  EXPECT_NE(not_spot.status().message().find("a reservation's capacity does not come and go"),
            std::string::npos)
      << not_spot.status().message();
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
  // catalogPools: every accelerator type the zone has no pool of, small, on demand and spot.
  for (const char* id :
       {"us-central1-a/a2-highgpu-1g/ON_DEMAND", "us-central1-c/g4-standard-48/SPOT",
        "us-central1-b/ct6e-standard-4t/ON_DEMAND/2x2", "us-central1-a/ct5p-hightpu-4t/SPOT/2x2x1",
        "us-central1-b/n1+NVIDIA_TESLA_T4/ON_DEMAND", "us-central1-a/cloud-tpu+TPU_V2/ON_DEMAND",
        "us-central1-c/cloud-tpu+TPU_V3/SPOT"}) {
    const CapacityPool* pool = fleet->FindPool(id);
    ASSERT_NE(pool, nullptr) << id;
    EXPECT_EQ(pool->units, 2) << id;
  }
  // cloud-tpu: a v2-8 / v3-8 host a unit, at $4.50 / $8.00 an hour on demand.
  const CapacityPool* v2 = fleet->FindPool("us-central1-a/cloud-tpu+TPU_V2/ON_DEMAND");
  EXPECT_EQ(v2->attached, AcceleratorType::kTpuV2);
  EXPECT_EQ(v2->tpu_chips, 4);
  EXPECT_DOUBLE_EQ(v2->price_per_node_hour, 4.5);
  EXPECT_DOUBLE_EQ(fleet->FindPool("us-central1-a/cloud-tpu+TPU_V3/ON_DEMAND")->price_per_node_hour,
                   8.0);
  EXPECT_EQ(fleet->FindPool("us-central1-a/g2-standard-48/ON_DEMAND")->units, 8)
      << "an explicit pool is not doubled by the catalog's";
  EXPECT_EQ(fleet->FindPool("us-central1-a/g2-standard-48/SPOT"), nullptr)
      << "an explicit pool of a type bounds it in its zone, other models too";
  EXPECT_EQ(fleet->FindPool("us-central1-a/n1-standard-4/ON_DEMAND"), nullptr) << "CPU is elastic";
  for (size_t i = 1; i < fleet->pools.size(); ++i) {
    EXPECT_LE(fleet->pools[i - 1].zone, fleet->pools[i].zone) << "each zone's pools together";
  }
  auto negative = ParseFleet(R"({"neverFitsTimeout": "-5s", "zones": [{"zone": "us-central1-a",
      "pools": [{"machineType": "a3-megagpu-8g", "model": "ON_DEMAND", "nodes": 2}]}]})",
                             "f.json");
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.status().message().find("neverFitsTimeout"), std::string::npos)
      << negative.status().message();
}

constexpr const char* kCohortZones = R"("zones": [{"zone": "us-central1-a", "pools": [
      {"machineType": "a3-megagpu-8g", "model": "RESERVATION", "reservation": "r1", "term": "1y",
       "nodes": 8},
      {"machineType": "a3-megagpu-8g", "model": "SPOT", "nodes": 4}]}])";

TEST(FleetFileTest, CohortsOwnPoolsAndGiveTheirMembersShares) {
  auto fleet = ParseFleet(std::string("{") + kCohortZones + R"(, "cohorts": [{"name": "research",
      "pools": ["us-central1-a/a3-megagpu-8g/RESERVATION/r1", "us-central1-a/a3-megagpu-8g/SPOT"],
      "members": [
        {"project": "team-a", "weight": 2, "nominal": {"a3-megagpu-8g/RESERVATION": 6},
         "lendingLimit": {"a3-megagpu-8g/RESERVATION": 2}},
        {"project": "team-b", "nominal": {"a3-megagpu-8g/RESERVATION": 2},
         "borrowingLimit": {"a3-megagpu-8g/SPOT": 1}}]}]})",
                          "f.json");
  ASSERT_TRUE(fleet.ok()) << fleet.status().message();
  ASSERT_EQ(fleet->cohorts.size(), 1u);
  const Cohort& c = fleet->cohorts[0];
  EXPECT_EQ(c.capacity.at("a3-megagpu-8g/RESERVATION"), 8);
  EXPECT_EQ(c.capacity.at("a3-megagpu-8g/SPOT"), 4);
  ASSERT_NE(c.Member("team-a"), nullptr);
  EXPECT_EQ(c.Member("team-a")->weight, 2);
  EXPECT_EQ(c.Member("team-b")->weight, 1) << "the default weight";
  EXPECT_EQ(fleet->pools[0].cohort, 0);
}

TEST(FleetFileTest, ABadCohortIsRefusedNamingTheField) {
  auto parse = [](const std::string& cohorts) {
    auto fleet =
        ParseFleet(std::string("{") + kCohortZones + ", \"cohorts\": " + cohorts + "}", "f.json");
    return fleet.ok() ? std::string("ok") : fleet.status().message();
  };
  EXPECT_NE(parse(R"([{"name": "x", "pools": ["us-central1-a/nope"], "members": []}])")
                .find("cohorts[0].pools[0]: no pool"),
            std::string::npos);
  EXPECT_NE(parse(R"([{"name": "x", "pools": ["us-central1-a/a3-megagpu-8g/SPOT"],
      "members": [{"project": "a", "nominal": {"a3-megagpu-8g/RESERVATION": 1}}]}])")
                .find("is not a resource of cohort x's pools (they have: a3-megagpu-8g/SPOT)"),
            std::string::npos);
  EXPECT_NE(parse(R"([{"name": "x", "pools": ["us-central1-a/a3-megagpu-8g/SPOT"],
      "members": [{"project": "a", "nominal": {"a3-megagpu-8g/SPOT": 3}},
                  {"project": "b", "nominal": {"a3-megagpu-8g/SPOT": 2}}]}])")
                .find("add up to 5, more than the 4 its pools have"),
            std::string::npos);
  EXPECT_NE(parse(R"([{"name": "x", "pools": ["us-central1-a/a3-megagpu-8g/SPOT"],
      "members": [{"project": "a"}]}, {"name": "y", "pools": ["us-central1-a/a3-megagpu-8g/SPOT"],
      "members": []}])")
                .find("already belongs to a cohort"),
            std::string::npos);
  EXPECT_NE(parse(R"([{"name": "x", "pools": ["us-central1-a/a3-megagpu-8g/SPOT"],
      "members": [{"project": "a", "weight": 0}]}])")
                .find("weight: must be positive"),
            std::string::npos);
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

// The maps of machine type (or image) → value name the key whose value is bad.
TEST(FleetFileTest, ABadBootTimeOrImageSizeIsNamedByItsKey) {
  const std::string zones = R"("zones": [{"zone": "us-central1-a", "pools": [
      {"machineType": "a3-megagpu-8g", "model": "ON_DEMAND", "nodes": 2}]}])";
  for (auto [field, want] : {
           std::pair{R"("bootTime": {"a3-megagpu-8g": 5})",
                     "bootTime.a3-megagpu-8g: must be a duration like \"300s\""},
           std::pair{R"("bootTime": "300s")", "bootTime: must be an object"},
           std::pair{R"("imageSizeGb": {"default": -1})",
                     "imageSizeGb.default: must be a non-negative number"},
       }) {
    auto fleet = ParseFleet("{" + std::string(field) + ", " + zones + "}", "f");
    ASSERT_FALSE(fleet.ok()) << field;
    EXPECT_NE(fleet.status().message().find(want), std::string::npos) << fleet.status().message();
  }
  auto good = ParseFleet(
      R"({"bootTime": {"default": "90s"}, "imageSizeGb": {"default": 4}, )" + zones + "}", "f");
  ASSERT_TRUE(good.ok()) << good.status().message();
  EXPECT_EQ(good->BootTime("a3-megagpu-8g"), std::chrono::seconds(90));
  EXPECT_EQ(good->image_size_gb.at("default"), 4);
}

TEST(FleetFileTest, UnknownKeysAndTheOldDwsTimetableAreRefused) {
  EXPECT_FALSE(ParseFleet(R"({"zones": [], "typo": 1})", "f").ok());
  auto flex = ParseFleet(R"({"zones": [{"zone": "us-central1-a", "pools": [
      {"machineType": "a3-megagpu-8g", "model": "FLEX_START",
       "flexStart": [{"after": "600s", "nodes": 8}]}]}]})",
                         "f");
  ASSERT_FALSE(flex.ok());
  EXPECT_NE(flex.status().message().find("zones[0].pools[0].flexStart"), std::string::npos)
      << flex.status().message();
  auto no_nodes = ParseFleet(R"({"zones": [{"zone": "us-central1-a", "pools": [
      {"machineType": "a3-megagpu-8g", "model": "FLEX_START"}]}]})",
                             "f");
  EXPECT_FALSE(no_nodes.ok());
}

TEST(FleetFileTest, ADwsPoolReadsItsQueue) {
  auto fleet = ParseFleet(R"({"zones": [{"zone": "us-central1-a", "pools": [
      {"machineType": "a3-megagpu-8g", "model": "FLEX_START", "nodes": 32,
       "queue": {"baseWait": "120s", "waitPerNode": "60s", "p95Ratio": 2,
                 "outsideNodesAhead": 0}}]}]})",
                          "f");
  ASSERT_TRUE(fleet.ok()) << fleet.status().message();
  const DwsQueueModel& q = fleet->pools[0].dws_queue;
  EXPECT_EQ(q.base_wait, std::chrono::seconds(120));
  EXPECT_EQ(q.wait_per_node, std::chrono::seconds(60));
  EXPECT_EQ(q.p95_ratio, 2);
  EXPECT_EQ(q.outside_nodes_ahead, 0);
  auto on_spot = ParseFleet(R"({"zones": [{"zone": "us-central1-a", "pools": [
      {"machineType": "a3-megagpu-8g", "model": "SPOT", "nodes": 4,
       "queue": {"baseWait": "120s"}}]}]})",
                            "f");
  EXPECT_FALSE(on_spot.ok());
}

}  // namespace
}  // namespace trainyard

namespace trainyard {
namespace {

// A fleet for `serve --runtime=slurm`: each pool names the Slurm partition of its nodes.
TEST(FleetFileTest, APoolNamesItsSlurmPartition) {
  auto fleet = LoadFleetFile(TRAINYARD_SOURCE_DIR "/payloads/fleets/slurm-example.json");
  ASSERT_TRUE(fleet.ok()) << fleet.status().message();
  const CapacityPool* mega = fleet->FindPool("us-central1-a/a3-megagpu-8g/ON_DEMAND");
  ASSERT_NE(mega, nullptr);
  EXPECT_EQ(mega->slurm_partition, "a3mega");
  EXPECT_EQ(mega->nodes(), 16);
  const CapacityPool* cpu = fleet->FindPool("us-central1-a/elastic-cpu/ON_DEMAND");
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(cpu->slurm_partition, "") << "the cluster's default partition";
}

}  // namespace
}  // namespace trainyard
