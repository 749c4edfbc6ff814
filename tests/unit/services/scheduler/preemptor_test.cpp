// The preemptor alone: which admitted jobs stop for a job that does not fit.
#include "services/scheduler/preemptor.h"

#include <gtest/gtest.h>

#include <deque>
#include <unordered_set>

#include "tests/unit/services/scheduler/scheduler_parts_fixture.h"

namespace trainyard {
namespace {

using namespace std::chrono_literals;
using CM = ConsumptionModel;

const Timestamp kT0 = test::kPartsT0;

// One on-demand pool of 4 A3 Mega nodes.
Fleet FourNodes(Duration grace = Duration{}) {
  Fleet f = test::OneA3MegaPool(4);
  f.termination_grace = grace;
  return f;
}

struct Parts {
  explicit Parts(const Fleet& fleet)
      : index(fleet),
        snapshot(fleet, index),
        assigner(fleet, index, 10min),
        preemptor(fleet, index, 10min) {
    snapshot.Refresh(kT0);
  }
  // Admitted on 2 nodes, RUNNING since `since`, saving every hour.
  RunningJob& Run(int64_t id, Timestamp since, int priority = 100) {
    RunningJob& r = running.emplace_back();
    r.id = id;
    r.project_id = "demo";
    r.region = "us-central1";
    r.priority = priority;
    r.admitted_at = since;
    r.running_since = since;
    r.checkpoint_interval = 1h;
    r.placement.zone = "us-central1-b";
    r.placement.pools.push_back({0, 2, "a3-megagpu-8g", 0});
    snapshot.AddPlacement(r.placement, +1);
    return r;
  }
  std::optional<PreemptionPlan> PlanFor(int64_t nodes, int victims_left = 64) {
    SchedulerJob job = test::A3MegaGang(index, 99, nodes);
    job.priority = 1000;
    std::vector<const RunningJob*> lower;
    for (const RunningJob& r : running) lower.push_back(&r);
    const std::vector<CM> flavors = FlavorOrder(job);
    return preemptor.Plan(job, PreemptionCandidates{lower, {}, &claimed, victims_left}, snapshot,
                          assigner, FitOptions(flavors));
  }
  FleetIndex index;
  CapacitySnapshot snapshot;
  FlavorAssigner assigner;
  Preemptor preemptor;
  std::deque<RunningJob> running;  // addresses stay
  std::unordered_set<int64_t> claimed;
};

TEST(PreemptorTest, PicksTheVictimsThatLoseTheLeastWork) {
  const Fleet fleet = FourNodes();
  Parts parts(fleet);
  parts.Run(1, kT0 - 50min);  // would redo 50 minutes
  parts.Run(2, kT0 - 70min);  // saved at 60: would redo 10
  std::optional<PreemptionPlan> plan = parts.PlanFor(2);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->victims, std::vector<int64_t>{2});
  EXPECT_EQ(plan->placement.zone, "us-central1-b");
  EXPECT_TRUE(plan->reclaimed.empty());
  // Room for 4: both, and no fewer.
  plan = parts.PlanFor(4);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->victims.size(), 2u);
  // Never more than the cycle has left, never one another plan claimed, never in vain.
  EXPECT_FALSE(parts.PlanFor(4, /*victims_left=*/1));
  EXPECT_FALSE(parts.PlanFor(5));
  parts.claimed.insert(2);
  plan = parts.PlanFor(2);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->victims, std::vector<int64_t>{1});
}

TEST(PreemptorTest, AVictimWhoseEmergencySaveFitsTheGraceLosesNothing) {
  const Fleet fleet = FourNodes(/*grace=*/30s);
  Parts parts(fleet);
  parts.Run(1, kT0 - 50min).emergency_checkpoint = 20s;  // saves within the grace: loses nothing
  parts.Run(2, kT0 - 70min);                             // would redo 10 minutes
  std::optional<PreemptionPlan> plan = parts.PlanFor(2);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->victims, std::vector<int64_t>{1});
  // A save longer than the grace does not count.
  const RunningJob& slow = parts.running[0];
  RunningJob longer = slow;
  longer.emergency_checkpoint = 40s;
  EXPECT_FALSE(
      parts.preemptor.StopsBefore(longer, std::nullopt, parts.running[1], std::nullopt, kT0));
  EXPECT_TRUE(parts.preemptor.StopsBefore(slow, std::nullopt, parts.running[1], std::nullopt, kT0));
}

TEST(PreemptorTest, EqualLossStopsTheLowerPriorityThenTheNewest) {
  const Fleet fleet = FourNodes();
  Parts parts(fleet);
  RunningJob a = parts.Run(1, kT0 - 10min, 200);
  RunningJob b = parts.Run(2, kT0 - 10min, 100);
  EXPECT_TRUE(parts.preemptor.StopsBefore(b, std::nullopt, a, std::nullopt, kT0));
  b.priority = 200;
  b.admitted_at = kT0 - 5min;  // newer
  EXPECT_TRUE(parts.preemptor.StopsBefore(b, std::nullopt, a, std::nullopt, kT0));
  // Another member's borrowed work goes first, whatever it would lose.
  EXPECT_TRUE(parts.preemptor.StopsBefore(a, 0.5, b, std::nullopt, kT0));
}

}  // namespace
}  // namespace trainyard
