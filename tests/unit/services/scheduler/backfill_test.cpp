// Backfill alone: the earliest time a job blocked by capacity fits as running jobs end.
#include "services/scheduler/backfill.h"

#include <gtest/gtest.h>

#include "tests/unit/services/scheduler/scheduler_parts_fixture.h"

namespace trainyard {
namespace {

using namespace std::chrono_literals;
using CM = ConsumptionModel;

const Timestamp kT0 = test::kPartsT0;

Fleet EightNodes() { return test::OneA3MegaPool(8); }

struct Parts {
  explicit Parts(const Fleet& fleet)
      : index(fleet), snapshot(fleet, index), assigner(fleet, index, 10min) {
    snapshot.Refresh(kT0);
  }
  RunningJob Running(int64_t id, int64_t nodes, Timestamp ends) {
    RunningJob r;
    r.id = id;
    r.project_id = "demo";
    r.region = "us-central1";
    r.expected_end = ends;
    r.placement.zone = "us-central1-b";
    r.placement.pools.push_back({0, nodes, "a3-megagpu-8g", 0});
    snapshot.AddPlacement(r.placement, +1);
    backfill.AddRunning(r, +1);
    return r;
  }
  std::optional<Reservation> Reserve(int64_t nodes, Duration horizon = 24h) {
    SchedulerJob job = test::A3MegaGang(index, 99, nodes);
    job.priority = 1000;
    return backfill.Reserve(job, snapshot, assigner, FlavorOrder(job), horizon);
  }
  FleetIndex index;
  CapacitySnapshot snapshot;
  FlavorAssigner assigner;
  Backfill backfill;
};

TEST(BackfillTest, HoldsTheEarliestTimeTheGangFits) {
  const Fleet fleet = EightNodes();
  Parts parts(fleet);
  parts.Running(1, 6, kT0 + 1h);
  const RunningJob late = parts.Running(2, 2, kT0 + 3h);
  std::optional<Reservation> four = parts.Reserve(4);
  ASSERT_TRUE(four);
  EXPECT_EQ(four->zone, "us-central1-b");
  EXPECT_EQ(four->hold.job_id, 99);
  EXPECT_EQ(four->hold.start, kT0 + 1h);
  // Of the 6 nodes free then, 2 are left to later long jobs.
  ASSERT_EQ(four->hold.slack.size(), 1u);
  EXPECT_EQ(four->hold.slack[0], (std::pair<int, int64_t>{0, 2}));
  std::optional<Reservation> eight = parts.Reserve(8);
  ASSERT_TRUE(eight);
  EXPECT_EQ(eight->hold.start, kT0 + 3h);
  EXPECT_FALSE(parts.Reserve(8, /*horizon=*/2h));
  EXPECT_FALSE(parts.Reserve(9));
  // A job that stops no longer frees its nodes later.
  parts.backfill.AddRunning(late, -1);
  EXPECT_FALSE(parts.Reserve(8));
  parts.backfill.Clear();
  EXPECT_FALSE(parts.Reserve(4));
}

// NextChange: when a hold could be booked otherwise with nothing starting or ending: the
// earliest expected end falling due (a hold on it then starts at the clock, and moves with every
// cycle: the clock itself while one is overdue), or an end coming within the horizon.
TEST(BackfillTest, NextChangeIsAnEndFallingDueOrComingWithinTheHorizon) {
  const Fleet fleet = EightNodes();
  Parts parts(fleet);
  EXPECT_FALSE(parts.backfill.NextChange(kT0, 24h).has_value());
  parts.Running(2, 2, kT0 + 30h);
  parts.Running(3, 2, kT0 + 50h);
  EXPECT_EQ(parts.backfill.NextChange(kT0, 24h), kT0 + 6h);
  EXPECT_EQ(parts.backfill.NextChange(kT0 + 6h, 24h), kT0 + 26h);
  EXPECT_EQ(parts.backfill.NextChange(kT0 + 1h, 72h), kT0 + 30h);
  parts.Running(1, 4, kT0 + 2h);
  EXPECT_EQ(parts.backfill.NextChange(kT0, 24h), kT0 + 2h);
  EXPECT_EQ(parts.backfill.NextChange(kT0 + 2h, 24h), kT0 + 2h);
}

}  // namespace
}  // namespace trainyard
