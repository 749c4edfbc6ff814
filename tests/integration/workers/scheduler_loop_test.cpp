// The scheduler loop, the executor and the API's job service against a real PostgreSQL, driven by
// a manual clock: what a user sees through GET (state, reason, position, placement, cost) at every
// step of each consumption model's story.
#include <gtest/gtest.h>

#include "tests/integration/sim_fixture.h"

namespace trainyard {
namespace {

using namespace std::chrono_literals;

// Zone a: 2 reserved A3 Mega nodes for project demo (warm), 2 on demand, 2 spot, DWS capacity of
// 2 nodes after an hour. Cold boot 60s; a 10 GB image at 10 Gbps pulls in 8s.
constexpr const char* kFleet = R"({
  "bootTime": {"default": "60s"}, "imagePullGbps": 10, "imageSizeGb": {"default": 10},
  "quotas": {"default": {"PREEMPTIBLE_NVIDIA_H100_MEGA_80GB": 16}},
  "zones": [{"zone": "us-central1-a", "pools": [
    {"machineType": "a3-megagpu-8g", "model": "RESERVATION", "reservation": "r1", "term": "1y",
     "projects": ["demo"], "nodes": 2, "pricePerNodeHour": 36},
    {"machineType": "a3-megagpu-8g", "model": "ON_DEMAND", "nodes": 2, "pricePerNodeHour": 90},
    {"machineType": "a3-megagpu-8g", "model": "SPOT", "nodes": 2, "pricePerNodeHour": 18},
    {"machineType": "a3-megagpu-8g", "model": "FLEX_START", "pricePerNodeHour": 45, "nodes": 2,
     "queue": {"baseWait": "3600s", "waitPerNode": "0s", "p95Ratio": 1,
               "outsideNodesAhead": 0}}]}]})";

class SchedulerLoopTest : public testing::SimFixture {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(StartFleet(kFleet)); }
};

// A reservation guarantees capacity, not a booted VM holding the image: as on Vertex, each job's
// VMs are provisioned for it (boot, then the pull) and deleted after it, reserved ones included.
TEST_F(SchedulerLoopTest, StandardJobProvisionsReservedNodesAndPaysTheReservationsPrice) {
  CustomJob job = Create(1, SchedulingStrategy::kStandard);  // a 2-node gang
  Step();
  CustomJob admitted = Get(job);
  EXPECT_EQ(admitted.state, JobState::kPending);
  ASSERT_TRUE(admitted.trainyard);
  EXPECT_EQ(admitted.trainyard->reason_code, "ADMITTED");
  EXPECT_EQ(admitted.trainyard->zone, "us-central1-a");
  ASSERT_EQ(admitted.trainyard->pools.size(), 2u);
  EXPECT_EQ(admitted.trainyard->pools[0].consumption_model, "RESERVATION");
  EXPECT_EQ(admitted.trainyard->pools[0].reservation, "r1");
  EXPECT_EQ(admitted.trainyard->hourly_price_usd, 72);
  EXPECT_EQ(NodesInState(1), 2) << "both reserved nodes PROVISIONING";
  clock_.Advance(67s);
  Step();
  EXPECT_EQ(Get(job).state, JobState::kPending) << "boot 60s + pull 8s";
  clock_.Advance(1s);
  Step();
  EXPECT_EQ(Get(job).state, JobState::kRunning);
  EXPECT_EQ(NodesInState(3), 2) << "both nodes BUSY";
  clock_.Advance(600s);
  Step();
  CustomJob done = Get(job);
  EXPECT_EQ(done.state, JobState::kSucceeded);
  // 668s of two reserved nodes at $36/h.
  EXPECT_NEAR(done.trainyard->cost_usd, 72.0 * 668 / 3600, 1e-3);
  EXPECT_EQ(NodesInState(2), 0) << "no VM is kept: the reservation holds capacity, not nodes";

  // The next job provisions again: nothing stayed booted or cached.
  CustomJob again = Create(1, SchedulingStrategy::kStandard);
  Step();
  EXPECT_EQ(NodesInState(1), 2);
  clock_.Advance(67s);
  Step();
  EXPECT_EQ(Get(again).state, JobState::kPending);
}

// A pool the fleet file keeps booted (keepBooted, e.g. a GKE node pool with a minimum) keeps its
// nodes READY with the image between jobs: the first job only pulls, the next starts at once.
TEST_F(SchedulerLoopTest, AKeptBootedPoolStartsJobsWarmAndKeepsTheImage) {
  std::string fleet = kFleet;
  const std::string term = R"("term": "1y",)";
  fleet.replace(fleet.find(term), term.size(), term + R"( "keepBooted": true,)");
  StopFleet();
  ASSERT_NO_FATAL_FAILURE(StartFleet(fleet.c_str()));
  EXPECT_EQ(NodesInState(2), 2) << "booted before any job";
  CustomJob job = Create(1, SchedulingStrategy::kStandard);
  Step();
  clock_.Advance(7s);
  Step();
  EXPECT_EQ(Get(job).state, JobState::kPending) << "no boot, only the 8s image pull";
  clock_.Advance(1s);
  Step();
  EXPECT_EQ(Get(job).state, JobState::kRunning);
  clock_.Advance(600s);
  Step();
  EXPECT_EQ(Get(job).state, JobState::kSucceeded);
  EXPECT_NEAR(Get(job).trainyard->cost_usd, 72.0 * 608 / 3600, 1e-3);
  EXPECT_EQ(NodesInState(2), 2) << "kept READY with the image cached";

  CustomJob again = Create(1, SchedulingStrategy::kStandard);
  Step();
  Step();
  EXPECT_EQ(Get(again).state, JobState::kRunning);
}

TEST_F(SchedulerLoopTest, OnDemandNodesBootColdAndAreGivenBack) {
  CustomJob job = Create(1, SchedulingStrategy::kStandard, "", "60s", "other");
  Step();
  CustomJob admitted = Get(job, "other");
  ASSERT_TRUE(admitted.trainyard);
  EXPECT_EQ(admitted.trainyard->pools[0].consumption_model, "ON_DEMAND");
  EXPECT_EQ(NodesInState(1), 2) << "PROVISIONING";
  clock_.Advance(67s);
  Step();
  EXPECT_EQ(Get(job, "other").state, JobState::kPending) << "boot 60s + pull 8s";
  clock_.Advance(1s);
  Step();
  EXPECT_EQ(Get(job, "other").state, JobState::kRunning);
  clock_.Advance(60s);
  Step();
  EXPECT_EQ(Get(job, "other").state, JobState::kSucceeded);
  EXPECT_EQ(NodesInState(3), 0);
  EXPECT_EQ(NodesInState(1), 0);
}

TEST_F(SchedulerLoopTest, SpotJobQueuesOverPreemptibleQuotaWithItsReasonAndPosition) {
  CustomJob first = Create(0, SchedulingStrategy::kSpot);   // 1 node, 8 GPUs
  clock_.Advance(1s);                                       // queue order is creation order
  CustomJob second = Create(1, SchedulingStrategy::kSpot);  // 2 nodes: 8 + 16 > 16
  Step();
  CustomJob admitted = Get(first);
  ASSERT_TRUE(admitted.trainyard && !admitted.trainyard->pools.empty());
  EXPECT_EQ(admitted.trainyard->pools[0].consumption_model, "SPOT");
  CustomJob waiting = Get(second);
  EXPECT_EQ(waiting.state, JobState::kQueued);
  EXPECT_EQ(waiting.trainyard->reason_code, "QUOTA_EXCEEDED");
  EXPECT_EQ(waiting.trainyard->reason_message,
            "project quota for PREEMPTIBLE_NVIDIA_H100_MEGA_80GB exceeded: 8/16 in use, job needs "
            "16");
  EXPECT_EQ(waiting.trainyard->queue_position, 1);
}

// As `serve` runs it, positions are reported on a period of wall time (an hour here, so no step
// of the test reaches the next): the first pass reports them; after it a job that waits says why
// at once, with no position until the next report, and positions that moved are not rewritten.
TEST_F(SchedulerLoopTest, PositionsAreReportedOnAPeriodAndAVerdictAtOnce) {
  StopFleet();
  positions_period_ = std::chrono::hours(1);
  ASSERT_NO_FATAL_FAILURE(StartFleet(kFleet));
  CustomJob first = Create(0, SchedulingStrategy::kSpot);  // 1 node: runs
  clock_.Advance(1s);
  CustomJob second = Create(1, SchedulingStrategy::kSpot);  // 2 nodes: over the spot quota
  clock_.Advance(1s);
  CustomJob third = Create(1, SchedulingStrategy::kSpot);
  Step();
  EXPECT_EQ(Get(second).trainyard->queue_position, 1) << "the first pass reports positions";
  EXPECT_EQ(Get(third).trainyard->queue_position, 2);

  clock_.Advance(1s);
  CustomJob fourth = Create(1, SchedulingStrategy::kSpot);
  const std::string second_id = second.name.substr(second.name.rfind('/') + 1);
  ASSERT_TRUE(service_->Cancel(JobRef{ParentRef{"demo", "us-central1"}, second_id}).ok());
  Step();
  CustomJob waiting = Get(fourth);
  ASSERT_TRUE(waiting.trainyard);
  EXPECT_EQ(waiting.trainyard->reason_code, "QUOTA_EXCEEDED") << "its verdict, at once";
  EXPECT_FALSE(waiting.trainyard->queue_position) << "no position before the next report";
  EXPECT_EQ(Get(third).trainyard->queue_position, 2) << "moved up, shown at the next report";
  EXPECT_EQ(Get(first).state, JobState::kPending);
}

TEST_F(SchedulerLoopTest, HigherPriorityPreemptsAndTheVictimComesBack) {
  CustomJob low = Create(0, SchedulingStrategy::kStandard, "low", "3600s", "other");
  Step();
  clock_.Advance(10s);
  CustomJob low2 = Create(0, SchedulingStrategy::kStandard, "low", "3600s", "other");
  Step();
  clock_.Advance(70s);
  Step();
  ASSERT_EQ(Get(low, "other").state, JobState::kRunning);
  CustomJob high = Create(0, SchedulingStrategy::kStandard, "high", "60s", "other");
  Step();
  // The victim runs out its termination grace (30 s) while the preemptor waits, saying so.
  CustomJob waiting = Get(high, "other");
  EXPECT_EQ(waiting.state, JobState::kQueued);
  EXPECT_EQ(waiting.trainyard->reason_code, "PREEMPTING");
  EXPECT_NE(waiting.trainyard->reason_message.find("preempting job " +
                                                   low2.name.substr(low2.name.rfind('/') + 1) +
                                                   " (lower priority): admitted when its 30s "
                                                   "termination grace ends at"),
            std::string::npos)
      << waiting.trainyard->reason_message;
  CustomJob told = Get(low2, "other");
  EXPECT_EQ(told.state, JobState::kRunning);
  EXPECT_EQ(told.trainyard->reason_code, "PREEMPTION_NOTICE");
  EXPECT_NE(told.trainyard->reason_message.find("stops at the end of its 30s termination grace"),
            std::string::npos)
      << told.trainyard->reason_message;
  clock_.Advance(30s);
  Step();
  CustomJob running = Get(high, "other");
  EXPECT_EQ(running.state, JobState::kPending);
  EXPECT_NE(running.trainyard->reason_message.find("after preempting 1 lower-priority job"),
            std::string::npos);
  // The newest low-priority job was the victim; it waits with its accrued cost.
  CustomJob victim = Get(low2, "other");
  EXPECT_EQ(victim.state, JobState::kQueued);
  EXPECT_GT(victim.trainyard->cost_usd, 0);
  Step();
  EXPECT_EQ(Get(low2, "other").trainyard->reason_code, "NO_CAPACITY");
  // /metrics counts the decisions by reason.
  metrics::Exposition e;
  scheduler_->metrics().Write(e);
  EXPECT_NE(e.text().find("\ntrainyard_scheduler_decisions_total{decision=\"preempt\",reason="
                          "\"HIGHER_PRIORITY\"} 1\n"),
            std::string::npos)
      << e.text();
  EXPECT_NE(e.text().find("\ntrainyard_scheduler_decisions_total{decision=\"hold\",reason="
                          "\"NO_CAPACITY\"} "),
            std::string::npos);
  clock_.Advance(68s);  // the high job boots (60s) and pulls (8s) on the freed node…
  Step();
  EXPECT_EQ(Get(high, "other").state, JobState::kRunning);
  clock_.Advance(60s);  // …runs 60s and ends
  Step();
  Step();
  EXPECT_EQ(Get(high, "other").state, JobState::kSucceeded);
  EXPECT_EQ(Get(low2, "other").state, JobState::kPending) << "re-admitted on the freed node";
}

TEST_F(SchedulerLoopTest, FlexStartWaitsForDwsCapacityThenRuns) {
  CustomJob job = Create(1, SchedulingStrategy::kFlexStart, "", "60s", "other");
  Step();
  CustomJob waiting = Get(job, "other");
  EXPECT_EQ(waiting.state, JobState::kQueued);
  EXPECT_EQ(waiting.trainyard->reason_code, "WAITING_FOR_DWS");
  clock_.Advance(3600s);
  Step();
  CustomJob admitted = Get(job, "other");
  EXPECT_EQ(admitted.state, JobState::kPending);
  EXPECT_EQ(admitted.trainyard->pools[0].consumption_model, "FLEX_START");
}

TEST_F(SchedulerLoopTest, FlexStartFailsAfterMaxWaitDuration) {
  CustomJob spec;
  spec.display_name = "too-big-for-dws";
  WorkerPoolSpec pool;
  pool.machine_spec = MachineSpec{};
  pool.machine_spec->machine_type = "a3-megagpu-8g";
  pool.machine_spec->accelerator_type = AcceleratorType::kNvidiaH100Mega80gb;
  pool.machine_spec->accelerator_count = 8;
  pool.replica_count = 1;
  pool.container_spec = ContainerSpec{};
  pool.container_spec->image_uri = "nemo";
  spec.job_spec.worker_pool_specs.push_back(pool);
  pool.replica_count = 3;  // 4 nodes: more than DWS will ever offer here
  spec.job_spec.worker_pool_specs.push_back(pool);
  spec.job_spec.scheduling = Scheduling{};
  spec.job_spec.scheduling->strategy = SchedulingStrategy::kFlexStart;
  spec.job_spec.scheduling->max_wait_duration = 1800s;
  auto job = service_->Create(ParentRef{"demo", "us-central1"}, spec, "");
  ASSERT_TRUE(job.ok()) << job.status().message();
  Step();
  clock_.Advance(1800s);
  Step();
  CustomJob failed = Get(*job);
  EXPECT_EQ(failed.state, JobState::kFailed);
  ASSERT_TRUE(failed.error);
  EXPECT_EQ(failed.error->code, 8);
  EXPECT_NE(failed.error->message.find("maxWaitDuration (30m)"), std::string::npos);
}

TEST_F(SchedulerLoopTest, OnlyOneSchedulerLeads) {
  storage::PgSchedulerStore other_store(conninfo_);
  SchedulerLoop other(other_store, fleet_, clock_);
  auto first = scheduler_->RunOnce();
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(first->leading);
  auto second = other.RunOnce();
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->leading);
}

// A leader starts from the jobs that have not ended, read at once, not from the whole history of
// the change feed (a server with a million ended jobs would decode them all at every start and
// after every skipped commit), and follows the feed from where that read left it.
TEST_F(SchedulerLoopTest, ANewLeaderReadsOnlyTheJobsThatHaveNotEndedAndFollowsTheFeedFromThere) {
  std::vector<CustomJob> ending;
  for (int i = 0; i < 5; ++i) ending.push_back(Create(0, SchedulingStrategy::kStandard, "", "60s"));
  auto all_ended = [&] {
    for (const CustomJob& job : ending) {
      if (Get(job).state != JobState::kSucceeded) return false;
    }
    return true;
  };
  for (int i = 0; i < 40 && !all_ended(); ++i) {
    Step();
    clock_.Advance(30s);
  }
  ASSERT_TRUE(all_ended());
  // Two 2-node gangs take the four standard nodes; a third waits.
  CustomJob a = Create(1, SchedulingStrategy::kStandard, "", "3600s");
  CustomJob b = Create(1, SchedulingStrategy::kStandard, "", "3600s");
  CustomJob waiting = Create(1, SchedulingStrategy::kStandard, "", "60s");
  Step();
  ASSERT_EQ(Get(a).state, JobState::kPending);
  ASSERT_EQ(Get(waiting).state, JobState::kQueued);

  ASSERT_TRUE(scheduler_store_->Resign().ok());
  storage::PgSchedulerStore other_store(conninfo_);
  SchedulerLoop other(other_store, fleet_, clock_);
  ASSERT_NO_FATAL_FAILURE(WaitForFeed());
  auto first = other.RunOnce();
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_TRUE(first->leading);
  EXPECT_EQ(first->reloaded, 3) << "the two gangs and the waiting one; not the five that ended";
  EXPECT_EQ(first->committed.admitted, 0) << "it knows the gangs hold the standard nodes";
  EXPECT_EQ(Get(waiting).state, JobState::kQueued);

  CustomJob later = Create(0, SchedulingStrategy::kSpot, "", "60s");
  ASSERT_NO_FATAL_FAILURE(WaitForFeed());
  auto next = other.RunOnce();
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->reloaded, 0);
  EXPECT_GE(next->changes, 1) << "the feed carries what came after the read";
  EXPECT_EQ(Get(later).state, JobState::kPending);
}

}  // namespace
}  // namespace trainyard
