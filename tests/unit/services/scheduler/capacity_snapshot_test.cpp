// The capacity snapshot alone: free units per pool, quota accounts, freed units.
#include "services/scheduler/capacity_snapshot.h"

#include <gtest/gtest.h>

#include "services/fleet/node_state.h"

#include "tests/unit/services/scheduler/scheduler_parts_fixture.h"

namespace trainyard {
namespace {

using CM = ConsumptionModel;

const Timestamp kT0 = test::kPartsT0;

Fleet OnePool() { return test::OneA3MegaPool(8); }

TEST(CapacitySnapshotTest, FreeIsCapacityLessHeldAndDown) {
  const Fleet fleet = OnePool();
  const FleetIndex index(fleet);
  CapacitySnapshot snapshot(fleet, index);
  snapshot.Refresh(kT0);
  EXPECT_EQ(snapshot.now(), kT0);
  EXPECT_EQ(snapshot.Available(0, kT0), 8);
  Placement placement;
  placement.pools.push_back({0, 3, "a3-megagpu-8g", 0});
  snapshot.AddPlacement(placement, +1);
  snapshot.SetUnitsDown(0, 2);
  EXPECT_EQ(snapshot.Available(0, kT0), 3);
  snapshot.AddPlacement(placement, -1);
  EXPECT_EQ(snapshot.Available(0, kT0), 6);
  snapshot.AddPlacement(placement, +1);
  snapshot.Clear();  // what admitted jobs hold goes; units down stay (the fleet says so)
  EXPECT_EQ(snapshot.Available(0, kT0), 6);
  snapshot.SetUnitsDown(7, 1);  // no such pool: nothing happens
}

TEST(CapacitySnapshotTest, QuotaNarrowsTheFlavorsAJobMayTake) {
  Fleet fleet = OnePool();
  fleet.quotas.defaults["NVIDIA_H100_MEGA_80GB"] = 16;
  fleet.quotas.defaults["PREEMPTIBLE_NVIDIA_H100_MEGA_80GB"] = 8;  // one node of spot
  const FleetIndex index(fleet);
  CapacitySnapshot snapshot(fleet, index);
  SchedulerJob job;
  job.project_id = "demo";
  QuotaDemand d{"NVIDIA_H100_MEGA_80GB", 16};
  d.accounts = {snapshot.AccountOf("demo", d.metric),
                snapshot.AccountOf("demo", PreemptibleQuotaMetric(d.metric))};
  job.quota.push_back(d);
  std::vector<CM> models = {CM::kSpot, CM::kOnDemand};
  EXPECT_FALSE(snapshot.CheckQuota(job, models));
  EXPECT_EQ(models, std::vector<CM>{CM::kOnDemand});  // two nodes never fit spot's quota

  RunningJob running;
  running.project_id = "demo";
  running.quota.push_back({"NVIDIA_H100_MEGA_80GB", 8});
  snapshot.AddShare(running, +1);
  EXPECT_EQ(snapshot.QuotaUsed("demo", "NVIDIA_H100_MEGA_80GB"), 8);
  std::vector<CM> on_demand = {CM::kOnDemand};
  std::optional<Verdict> blocked = snapshot.CheckQuota(job, on_demand);
  ASSERT_TRUE(blocked);
  EXPECT_EQ(blocked->code, ReasonCode::kQuotaExceeded);
  EXPECT_TRUE(snapshot.QuotaBlock("demo", {{"NVIDIA_H100_MEGA_80GB", 9}}));
  EXPECT_FALSE(snapshot.QuotaBlock("demo", {{"NVIDIA_H100_MEGA_80GB", 8}}));
}

TEST(CapacitySnapshotTest, FreedUnitsAddUpPerPool) {
  FreedUnits freed;
  AddFreed(freed, 2, 3);
  AddFreed(freed, 5, 1);
  AddFreed(freed, 2, 4);
  EXPECT_EQ(freed.size(), 2u);
  EXPECT_EQ(FreedIn(freed, 2), 7);
  EXPECT_EQ(FreedIn(freed, 9), 0);
}

}  // namespace
// A placed pool's node names say which blocks it holds (blockSize 4: ordinals 0-3 block 0).
TEST(CapacitySnapshotTest, BlockUnitsOfCountsAPlacedPoolsNodesPerBlock) {
  CapacityPool pool;
  pool.id = "us-central1-a/a3-megagpu-8g/ON_DEMAND";
  pool.units = 12;
  pool.block_nodes = 4;
  const std::vector<std::string> nodes = {NodeName(pool.id, 2), NodeName(pool.id, 3),
                                          NodeName(pool.id, 9)};
  EXPECT_EQ(BlockUnitsOf(pool, nodes), (std::vector<std::pair<int, int64_t>>{{0, 2}, {2, 1}}));
  pool.block_nodes = 0;
  EXPECT_TRUE(BlockUnitsOf(pool, nodes).empty()) << "a pool without blocks";
}

}  // namespace trainyard
