// The flavor assigner alone: where a gang fits on a capacity snapshot, and the typed reason (and
// its words, built apart) when it fits nowhere.
#include "services/scheduler/flavor_assigner.h"

#include <gtest/gtest.h>

#include "tests/unit/services/scheduler/scheduler_parts_fixture.h"

#include "services/scheduler/verdict_text.h"

namespace trainyard {
namespace {

using namespace std::chrono_literals;
using CM = ConsumptionModel;

const Timestamp kT0 = FromUnixMicros(1'800'000'000'000'000);

CapacityPool Pool(std::string zone, CM model, int units) {
  CapacityPool p;
  p.zone = zone;
  p.region = "us-central1";
  p.machine_type = "a3-megagpu-8g";
  p.model = model;
  p.units = units;
  p.id = zone + "/" + std::string(ConsumptionModelName(model));
  return p;
}

// Zone a: 2 on-demand nodes and 4 spot; zone b: 8 on-demand.
Fleet TwoZones() {
  Fleet f;
  f.epoch = kT0;
  f.pools.push_back(Pool("us-central1-a", CM::kOnDemand, 2));
  f.pools.push_back(Pool("us-central1-a", CM::kSpot, 4));
  f.pools.push_back(Pool("us-central1-b", CM::kOnDemand, 8));
  return f;
}
enum { kOnDemandA = 0, kSpotA = 1, kOnDemandB = 2 };

struct Parts {
  explicit Parts(const Fleet& fleet)
      : index(fleet), snapshot(fleet, index), assigner(fleet, index, 10min) {
    snapshot.Refresh(kT0);
  }
  SchedulerJob Job(int64_t id, int64_t nodes,
                   SchedulingStrategy strategy = SchedulingStrategy::kUnspecified) {
    SchedulerJob job = test::A3MegaGang(index, id, nodes);
    job.strategy = strategy;
    job.queue_time = kT0;
    return job;
  }
  // The job on the snapshot in its own flavor order, nothing held or freed.
  FitResult Assign(const SchedulerJob& job) {
    const std::vector<CM> flavors = FlavorOrder(job);
    return assigner.Assign(job, snapshot, FitOptions(flavors));
  }
  FleetIndex index;
  CapacitySnapshot snapshot;
  FlavorAssigner assigner;
};

TEST(FlavorAssignerTest, AGangThatFitsOneZoneOnlyIsPlacedThere) {
  const Fleet fleet = TwoZones();
  Parts parts(fleet);
  const SchedulerJob job = parts.Job(1, 4);
  FitResult fit = parts.Assign(job);
  ASSERT_TRUE(fit.fits());
  EXPECT_EQ(fit.placement->zone, "us-central1-b");
  ASSERT_EQ(fit.placement->pools.size(), 1u);
  EXPECT_EQ(fit.placement->pools[0].pool, kOnDemandB);
  EXPECT_EQ(fit.placement->pools[0].units, 4);
}

TEST(FlavorAssignerTest, OnlyZoneIsHonoured) {
  const Fleet fleet = TwoZones();
  Parts parts(fleet);
  const SchedulerJob job = parts.Job(1, 2);
  const std::vector<CM> flavors = FlavorOrder(job);
  // Zone b has the most free and comes first; a plan's zone is the only one tried.
  FitResult anywhere = parts.Assign(job);
  ASSERT_TRUE(anywhere.fits());
  EXPECT_EQ(anywhere.placement->zone, "us-central1-b");
  const int zone_a = parts.index.ZoneIndex("us-central1-a");
  FitResult in_a = parts.assigner.Assign(job, parts.snapshot, FitOptions(flavors).InZone(zone_a));
  ASSERT_TRUE(in_a.fits());
  EXPECT_EQ(in_a.placement->zone, "us-central1-a");
  EXPECT_EQ(in_a.placement->pools[0].pool, kOnDemandA);
  // Four nodes fit zone b only: not there.
  EXPECT_FALSE(
      parts.assigner.Place(parts.Job(2, 4), parts.snapshot, FitOptions(flavors).InZone(zone_a)));
}

TEST(FlavorAssignerTest, AJobThatFitsNowhereGetsATypedReason) {
  const Fleet fleet = TwoZones();
  Parts parts(fleet);
  const SchedulerJob big = parts.Job(1, 16);
  const std::vector<CM> flavors = FlavorOrder(big);
  FitResult never = parts.Assign(big);
  ASSERT_FALSE(never.fits());
  ASSERT_TRUE(std::holds_alternative<fit_reason::NeverFits>(never.reason));
  EXPECT_EQ(std::get<fit_reason::NeverFits>(never.reason).largest_pool, 8);
  EXPECT_EQ(CodeOf(never.reason), ReasonCode::kNeverFits);
  EXPECT_EQ(WhyNotText(never.reason),
            NeverFitsCapacityMessage(std::get<fit_reason::NeverFits>(never.reason).gang, 8));

  // Zone b busy: 6 nodes fit no zone now, though they would on an empty fleet.
  Placement busy;
  busy.zone = "us-central1-b";
  busy.pools.push_back({kOnDemandB, 5, "a3-megagpu-8g", 0});
  parts.snapshot.AddPlacement(busy, +1);
  FitResult full = parts.Assign(parts.Job(2, 6));
  ASSERT_FALSE(full.fits());
  ASSERT_TRUE(std::holds_alternative<fit_reason::NoCapacity>(full.reason));
  const auto& no = std::get<fit_reason::NoCapacity>(full.reason);
  EXPECT_EQ(no.best_zone, "us-central1-b");
  EXPECT_EQ(no.best_free, 3);
  EXPECT_FALSE(no.split_over_zones);
  EXPECT_EQ(CodeOf(full.reason), ReasonCode::kNoCapacity);
  EXPECT_EQ(WhyNotText(full.reason), NoCapacityMessage(no.gang, "us-central1-b", 3));

  // 4 nodes: 2 free in a and 3 in b add up, but no zone alone holds them.
  FitResult split = parts.Assign(parts.Job(3, 4));
  EXPECT_EQ(CodeOf(split.reason), ReasonCode::kNoZoneFitsGang);

  // Planning with what victims give back: the same job fits.
  const FreedUnits freed = {{kOnDemandB, 5}};
  EXPECT_TRUE(
      parts.assigner.Place(parts.Job(2, 6), parts.snapshot, FitOptions(flavors).WithFreed(freed)));
}

TEST(FlavorAssignerTest, FlavorsAreTriedInOrder) {
  const Fleet fleet = TwoZones();
  Parts parts(fleet);
  // LOW_COST: spot before on-demand, so zone a's spot pool wins over zone b's on-demand.
  const SchedulerJob job = parts.Job(1, 3, SchedulingStrategy::kLowCost);
  const std::vector<CM> flavors = FlavorOrder(job);
  ASSERT_EQ(flavors, (std::vector<CM>{CM::kSpot, CM::kOnDemand}));
  FitResult fit = parts.Assign(job);
  ASSERT_TRUE(fit.fits());
  EXPECT_EQ(fit.placement->pools[0].pool, kSpotA);
}

TEST(FlavorAssignerTest, HeldCapacityIsKeptForTheJobThatHoldsIt) {
  const Fleet fleet = TwoZones();
  Parts parts(fleet);
  SchedulerJob job = parts.Job(1, 8);
  job.expected_runtime = 2h;
  const std::vector<CM> flavors = FlavorOrder(job);
  // Job 7 holds zone b from in an hour: a 2-hour job may take none of it.
  std::vector<CapacityHold> holds(1);
  holds[0].job_id = 7;
  holds[0].priority = 1000;
  holds[0].start = kT0 + 1h;
  holds[0].slack = {{kOnDemandB, 0}};
  FitResult held = parts.assigner.Assign(job, parts.snapshot, FitOptions(flavors).WithHolds(holds));
  ASSERT_FALSE(held.fits());
  ASSERT_TRUE(std::holds_alternative<fit_reason::HeldForReservation>(held.reason));
  EXPECT_EQ(std::get<fit_reason::HeldForReservation>(held.reason).job_id, 7);
  EXPECT_EQ(CodeOf(held.reason), ReasonCode::kHeldForReservation);
  EXPECT_EQ(WhyNotText(held.reason), HeldMessage(7, 1000, kT0 + 1h));
  // Without the holds (backfill's own search), or for a job that ends before the hold starts.
  EXPECT_TRUE(parts.assigner.Place(job, parts.snapshot, FitOptions(flavors)));
  job.expected_runtime = 30min;
  EXPECT_TRUE(parts.assigner.Place(job, parts.snapshot, FitOptions(flavors).WithHolds(holds)));
}

TEST(FlavorAssignerTest, ARegionWithoutPoolsNeverFits) {
  const Fleet fleet = TwoZones();
  Parts parts(fleet);
  SchedulerJob job = parts.Job(1, 1);
  job.region = "europe-west4";
  FitResult fit = parts.Assign(job);
  ASSERT_TRUE(std::holds_alternative<fit_reason::NoRegion>(fit.reason));
  EXPECT_EQ(CodeOf(fit.reason), ReasonCode::kNeverFits);
  EXPECT_EQ(WhyNotText(fit.reason), NoRegionMessage("europe-west4"));
}

// Blocks of 4 nodes. Zone a has the most free (6 of 12) but no block with 4: its running jobs
// hold 2 in each. Zone b has 4 free, all in block 1. A gang of 4 lands in zone b's whole block,
// where its all-reduce stays inside one rack, rather than spread over zone a's three.
TEST(FlavorAssignerTest, AGangLandsInAWholeBlockRatherThanSpreadInTheFreerZone) {
  Fleet fleet;
  fleet.epoch = kT0;
  fleet.pools.push_back(Pool("us-central1-a", CM::kOnDemand, 12));
  fleet.pools.push_back(Pool("us-central1-b", CM::kOnDemand, 8));
  for (CapacityPool& p : fleet.pools) p.block_nodes = 4;
  Parts parts(fleet);
  Placement fragmented;
  fragmented.zone = "us-central1-a";
  fragmented.pools.push_back({0, 6, "a3-megagpu-8g", 0, {{0, 2}, {1, 2}, {2, 2}}});
  parts.snapshot.AddPlacement(fragmented, +1);
  Placement first_block;
  first_block.zone = "us-central1-b";
  first_block.pools.push_back({1, 4, "a3-megagpu-8g", 0, {{0, 4}}});
  parts.snapshot.AddPlacement(first_block, +1);
  EXPECT_EQ(parts.snapshot.BlocksFor(0, 4, Placement{}), 2) << "zone a: at best 2 of its blocks";
  EXPECT_EQ(parts.snapshot.BlocksFor(1, 4, Placement{}), 1);

  const SchedulerJob job = parts.Job(1, 4);
  FitResult fit = parts.Assign(job);
  ASSERT_TRUE(fit.fits());
  EXPECT_EQ(fit.placement->zone, "us-central1-b");
  ASSERT_EQ(fit.placement->pools.size(), 1u);
  EXPECT_EQ(fit.placement->pools[0].block_units, (std::vector<std::pair<int, int64_t>>{{1, 4}}));

  // Once zone b's block is taken, the next gang of 4 spreads over the fewest blocks of zone a.
  parts.snapshot.AddPlacement(*fit.placement, +1);
  FitResult next = parts.Assign(parts.Job(2, 4));
  ASSERT_TRUE(next.fits());
  EXPECT_EQ(next.placement->zone, "us-central1-a");
  EXPECT_EQ(next.placement->pools[0].block_units.size(), 2u);
}

}  // namespace
}  // namespace trainyard
