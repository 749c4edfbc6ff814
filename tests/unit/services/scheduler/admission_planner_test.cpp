// The admission planner on a hand-built fleet: which nodes a decision takes, what it costs, how
// long it takes to start, and the transitions a store applies.
#include "services/scheduler/admission_planner.h"

#include <gtest/gtest.h>

#include "services/fleet/node_state.h"

namespace trainyard {
namespace {

using namespace std::chrono_literals;
using CM = ConsumptionModel;

const Timestamp kT0 = FromUnixMicros(1'800'000'000'000'000);

Fleet TwoPoolFleet() {
  Fleet f;
  f.epoch = kT0;
  f.boot_time["a3-megagpu-8g"] = 360s;
  f.image_pull_gbps = 8;
  f.image_size_gb["img:a"] = 10;  // 10 s to pull
  CapacityPool reserved;
  reserved.id = "us-central1-a/a3-megagpu-8g/RESERVATION/r1";
  reserved.zone = "us-central1-a";
  reserved.machine_type = "a3-megagpu-8g";
  reserved.model = CM::kReservation;
  reserved.units = 4;
  reserved.price_per_node_hour = 50;
  f.pools.push_back(reserved);
  CapacityPool elastic;
  elastic.id = "us-central1-a/n1/ON_DEMAND";
  elastic.zone = "us-central1-a";
  elastic.model = CM::kOnDemand;
  elastic.elastic = true;
  f.pools.push_back(elastic);
  return f;
}

AdmissionDecision Decision(int64_t job, int pool, int64_t units, std::string machine = "") {
  AdmissionDecision a;
  a.job_id = job;
  a.version = 3;
  a.placement.zone = "us-central1-a";
  a.placement.pools.push_back({pool, units, std::move(machine), 0});
  a.image_uri = "img:a";
  a.message = "admitted";
  return a;
}

FreeByPool Free(std::vector<FreeNode> nodes) {
  FreeByPool free;
  free.insert_or_assign({0, 0}, FreeUnits(1, nodes));
  return free;
}

TEST(AdmissionPlannerTest, TakesWarmCachedNodesFirstAndStartsWithoutABootOrPull) {
  Fleet fleet = TwoPoolFleet();
  AdmissionPlanner planner(fleet, /*simulated_startup=*/true);
  FreeByPool free = Free({{0, false, {}}, {1, true, {"img:a"}}, {2, true, {}}});
  auto plan = planner.PlanJob(Decision(7, 0, 1), kT0, free);
  ASSERT_TRUE(plan.has_value());
  ASSERT_EQ(plan->claims.size(), 1u);
  EXPECT_EQ(plan->claims[0].ordinals, std::vector<int64_t>{1});
  EXPECT_EQ(plan->transition.from(), JobState::kQueued);
  EXPECT_EQ(plan->transition.to(), JobState::kPending);
  ASSERT_TRUE(plan->transition.admission().has_value());
  EXPECT_EQ(plan->transition.admission()->startup, Duration{});
  EXPECT_EQ(plan->transition.admission()->hourly_price_micros, 50'000'000);
  EXPECT_EQ(plan->transition.admission()->pools[0].nodes,
            std::vector<std::string>{NodeName(fleet.pools[0].id, 1)});
}

// A commit reads a single-host pool's free nodes bounded by the units its admissions take there,
// per holder, with their images; a pool of slices is read whole; an elastic one not at all.
TEST(AdmissionPlannerTest, FreeNodesToReadBoundsSingleHostPoolsAndReadsSlicesWhole) {
  Fleet fleet = TwoPoolFleet();
  CapacityPool slices = fleet.pools[0];
  slices.id = "us-central1-a/tpu-v5p/RESERVATION/r2";
  slices.hosts_per_unit = 4;
  fleet.pools.push_back(slices);
  AdmissionPlanner planner(fleet, /*simulated_startup=*/true);
  CycleResult cycle;
  cycle.admissions.push_back(Decision(1, 0, 1));
  cycle.admissions.push_back(Decision(2, 0, 2));
  cycle.admissions.back().image_uri = "img:b";
  cycle.admissions.push_back(Decision(3, 0, 3));
  cycle.admissions.back().resource_uid = 9;
  cycle.admissions.push_back(Decision(4, 1, 5, "n1-standard-4"));
  cycle.admissions.push_back(Decision(5, 2, 1));
  std::vector<FreeNodesRead> reads = planner.FreeNodesToRead(cycle);
  ASSERT_EQ(reads.size(), 3u);
  EXPECT_EQ(reads[0].pool, 0);
  EXPECT_EQ(reads[0].holder, 0);
  EXPECT_EQ(reads[0].lowest, 3);
  EXPECT_EQ(reads[0].images, (std::vector<std::string>{"img:a", "img:b"}));
  EXPECT_EQ(reads[1].pool, 0);
  EXPECT_EQ(reads[1].holder, 9);
  EXPECT_EQ(reads[1].lowest, 3);
  EXPECT_EQ(reads[2].pool, 2);
  EXPECT_EQ(reads[2].lowest, 0) << "slices are chosen among all the pool's free nodes";
}

TEST(AdmissionPlannerTest, AColdGangWaitsForTheSlowestBootThenThePull) {
  Fleet fleet = TwoPoolFleet();
  AdmissionPlanner planner(fleet, /*simulated_startup=*/true);
  FreeByPool free = Free({{0, true, {"img:a"}}, {1, false, {}}});
  auto plan = planner.PlanJob(Decision(7, 0, 2), kT0, free);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->transition.admission()->startup, Duration(370s));
  EXPECT_EQ(plan->transition.admission()->hourly_price_micros, 100'000'000);
  // Real runtimes report their own start: no simulated wait.
  AdmissionPlanner real(fleet, /*simulated_startup=*/false);
  FreeByPool again = Free({{0, true, {"img:a"}}, {1, false, {}}});
  EXPECT_EQ(real.PlanJob(Decision(7, 0, 2), kT0, again)->transition.admission()->startup,
            Duration{});
}

TEST(AdmissionPlannerTest, AdmissionsOfOneCommitNeverShareANodeAndAShortPoolSkips) {
  Fleet fleet = TwoPoolFleet();
  AdmissionPlanner planner(fleet, true);
  FreeByPool free = Free({{0, true, {}}, {1, true, {}}});
  auto first = planner.PlanJob(Decision(1, 0, 1), kT0, free);
  auto second = planner.PlanJob(Decision(2, 0, 1), kT0, free);
  ASSERT_TRUE(first && second);
  EXPECT_NE(first->claims[0].ordinals, second->claims[0].ordinals);
  EXPECT_FALSE(planner.PlanJob(Decision(3, 0, 1), kT0, free).has_value());
}

// A chief and its workers of one CPU shape (a parameter-server job) are distinct VMs: two
// replicas named alike would be one host to whoever reads the names (CLUSTER_SPEC, the console).
TEST(AdmissionPlannerTest, ElasticVmsOfTwoWorkerPoolsOfOneShapeHaveDistinctNames) {
  Fleet fleet = TwoPoolFleet();
  AdmissionPlanner planner(fleet, true);
  FreeByPool free;
  AdmissionDecision chief_and_workers = Decision(42, 1, 1, "n1-standard-4");
  chief_and_workers.placement.pools.push_back({1, 2, "n1-standard-4", 0});
  chief_and_workers.placement.pools.push_back({1, 1, "n1-highmem-2", 0});
  auto plan = planner.PlanJob(chief_and_workers, kT0, free);
  ASSERT_TRUE(plan.has_value());
  const auto& pools = plan->transition.admission()->pools;
  ASSERT_EQ(pools.size(), 3u);
  EXPECT_EQ(pools[0].nodes,
            std::vector<std::string>{"us-central1-a-n1-standard-4-ON_DEMAND-j42-0"});
  EXPECT_EQ(pools[1].nodes,
            (std::vector<std::string>{"us-central1-a-n1-standard-4-ON_DEMAND-j42-1",
                                      "us-central1-a-n1-standard-4-ON_DEMAND-j42-2"}));
  EXPECT_EQ(pools[2].nodes, std::vector<std::string>{"us-central1-a-n1-highmem-2-ON_DEMAND-j42-0"});
}

TEST(AdmissionPlannerTest, ElasticVmsAreNamedAfterTheirJobOrResourceAndPricedAtListPrice) {
  Fleet fleet = TwoPoolFleet();
  AdmissionPlanner planner(fleet, true);
  FreeByPool free;
  auto plan = planner.PlanJob(Decision(42, 1, 2, "n1-standard-4"), kT0, free);
  ASSERT_TRUE(plan.has_value());
  EXPECT_TRUE(plan->claims.empty());  // nothing to claim: the VMs are made for it
  const PlacedPoolStatus& pool = plan->transition.admission()->pools[0];
  EXPECT_EQ(pool.nodes, (std::vector<std::string>{"us-central1-a-n1-standard-4-ON_DEMAND-j42-0",
                                                  "us-central1-a-n1-standard-4-ON_DEMAND-j42-1"}));
  EXPECT_EQ(
      plan->transition.admission()->hourly_price_micros,
      2 * static_cast<int64_t>(ListPricePerNodeHour("n1-standard-4", CM::kOnDemand, "", 0) * 1e6));

  HoldDecision hold{9, 1, Decision(0, 1, 1, "n1-standard-4").placement, ""};
  auto held = planner.PlanHold(hold, kT0, free);
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(held->placement.pools[0].nodes,
            std::vector<std::string>{"us-central1-a-n1-standard-4-ON_DEMAND-r9-0"});
}

TEST(AdmissionPlannerTest, AJobOnAResourcesNodesTakesOnlyThoseAndCostsNothingOfItsOwn) {
  Fleet fleet = TwoPoolFleet();
  AdmissionPlanner planner(fleet, true);
  FreeByPool free = Free({{0, true, {}}});
  free.insert_or_assign({0, 5}, FreeUnits(1, {{3, true, {"img:a"}}}));
  AdmissionDecision a = Decision(7, 0, 1);
  a.resource_uid = 5;
  auto plan = planner.PlanJob(a, kT0, free);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->resource_uid, 5);
  EXPECT_EQ(plan->claims[0].ordinals, std::vector<int64_t>{3});
  EXPECT_EQ(plan->transition.admission()->hourly_price_micros, 0);
}

TEST(AdmissionPlannerTest, AHoldIsReadyOnceItsColdNodesBoot) {
  Fleet fleet = TwoPoolFleet();
  AdmissionPlanner planner(fleet, true);
  FreeByPool free = Free({{0, false, {}}, {1, false, {}}});
  HoldDecision hold{9, 4, Decision(0, 0, 2).placement, ""};
  auto plan = planner.PlanHold(hold, kT0, free);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->ready_at, kT0 + std::chrono::microseconds(360'000'000));
  EXPECT_EQ(plan->placement.hourly_price_micros, 100'000'000);
  EXPECT_EQ(plan->claims[0].ordinals, (std::vector<int64_t>{0, 1}));
}

TEST(AdmissionPlannerTest, AVictimIsRequeuedWithWhoTookItsCapacityUnlessItMovedOn) {
  Fleet fleet = TwoPoolFleet();
  AdmissionPlanner planner(fleet, true);
  AdmissionDecision a = Decision(7, 0, 1);
  a.victims = {3, 4};
  a.reclaimed = {4};
  auto requeue = planner.PlanVictim(a, JobSnapshot{3, 2, JobState::kRunning, true}, kT0);
  ASSERT_TRUE(requeue.has_value());
  EXPECT_EQ(requeue->to(), JobState::kQueued);
  EXPECT_EQ(requeue->reason(), "preempted by higher-priority job 7; back in the queue");
  EXPECT_TRUE(requeue->interrupts_run());
  auto reclaimed = planner.PlanVictim(a, JobSnapshot{4, 2, JobState::kPending, false}, kT0);
  ASSERT_TRUE(reclaimed.has_value());
  EXPECT_EQ(reclaimed->reason(),
            "borrowed capacity reclaimed by job 7, whose project is within its cohort share; "
            "back in the queue");
  EXPECT_FALSE(planner.PlanVictim(a, JobSnapshot{3, 5, JobState::kCancelled, true}, kT0));

  // Told at its notice and stopped a grace later: one that saved then loses only the grace.
  a.notice_at = kT0 - std::chrono::seconds(30);
  a.saved_at_notice = {3};
  auto saved = planner.PlanVictim(a, JobSnapshot{3, 2, JobState::kRunning, true}, kT0);
  ASSERT_TRUE(saved.has_value());
  EXPECT_EQ(saved->progress_saved_at(), a.notice_at);
  EXPECT_EQ(saved->reason(),
            "preempted by higher-priority job 7, stopped at the end of its termination grace (its "
            "emergency checkpoint kept its progress up to the notice); back in the queue");
  auto unsaved = planner.PlanVictim(a, JobSnapshot{4, 2, JobState::kRunning, true}, kT0);
  ASSERT_TRUE(unsaved.has_value());
  EXPECT_FALSE(unsaved->progress_saved_at());
}

TEST(AdmissionPlannerTest, AFailureInTheQueueIsResourceExhausted) {
  Fleet fleet = TwoPoolFleet();
  AdmissionPlanner planner(fleet, true);
  auto t = planner.PlanFailure(FailureDecision{7, 2, "waited too long"}, kT0);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->to(), JobState::kFailed);
  ASSERT_TRUE(t->error().has_value());
  EXPECT_EQ(t->error()->code, static_cast<int>(Code::kResourceExhausted));
}

}  // namespace
// A chief and three workers on one pool of blocks take their nodes together, so the gang fits the
// one block that holds all four; when none does it is spread and told what that costs.
TEST(AdmissionPlannerTest, AGangSharesOneBlockWhenOneHoldsItAndIsToldWhenNone) {
  Fleet fleet = TwoPoolFleet();
  fleet.pools[0].units = 8;
  fleet.pools[0].block_nodes = 4;
  AdmissionPlanner planner(fleet, /*simulated_startup=*/true);
  AdmissionDecision gang = Decision(7, 0, 1);
  gang.placement.pools.push_back({0, 3, "", 0});
  auto free_of = [&](std::vector<int64_t> ordinals) {
    std::vector<FreeNode> nodes;
    for (int64_t o : ordinals) nodes.push_back({o, false, {}});
    FreeByPool free;
    free.insert_or_assign({0, 0}, FreeUnits(1, nodes, 4));
    return free;
  };
  FreeByPool free = free_of({0, 1, 4, 5, 6, 7});
  auto plan = planner.PlanJob(gang, kT0, free);
  ASSERT_TRUE(plan.has_value());
  ASSERT_EQ(plan->claims.size(), 2u);
  EXPECT_EQ(plan->claims[0].ordinals, std::vector<int64_t>{4}) << "the chief";
  EXPECT_EQ(plan->claims[1].ordinals, (std::vector<int64_t>{5, 6, 7})) << "its workers";
  EXPECT_EQ(plan->transition.admission()->pools[0].blocks, 1);
  EXPECT_EQ(plan->transition.reason(), "admitted");

  free = free_of({0, 1, 2, 5, 6, 7});
  plan = planner.PlanJob(gang, kT0, free);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->transition.admission()->pools[1].blocks, 2);
  EXPECT_EQ(plan->transition.reason(),
            "admitted; spread over 2 blocks of us-central1-a/a3-megagpu-8g/RESERVATION/r1 (no "
            "block had 4 free nodes): its all-reduce takes 2.0x as long");
}

}  // namespace trainyard
