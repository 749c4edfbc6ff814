// The fleet's failures end to end below HTTP: spot preemption with notice, restarts up to the
// Vertex limit, node failure and repair, and replay from the fleet's seed. A manual clock drives
// the scheduler leader (which runs the failure simulator) and the executor; every assertion is
// what a user sees through GET or in the job's events.
#include "services/jobs/catalog.h"
#include "storage/pg_fault_injection_store.h"
#include "tests/integration/sim_fixture.h"

namespace trainyard {
namespace {

using namespace std::chrono_literals;

constexpr const char* kSpotPool = "us-central1-a/a3-megagpu-8g/SPOT";

// Zone a: 2 reserved A3 Mega nodes for demo kept booted (keepBooted), 3 spot nodes with no hazard
// of their own (only injected preemptions). Cold boot 60s, image pull 8s, repair 600s, spot notice
// 30s.
constexpr const char* kFleet = R"({
  "seed": 7, "bootTime": {"default": "60s"}, "imagePullGbps": 10, "imageSizeGb": {"default": 10},
  "spotNotice": "30s", "repairTime": "600s",
  "zones": [{"zone": "us-central1-a", "pools": [
    {"machineType": "a3-megagpu-8g", "model": "RESERVATION", "reservation": "r1", "term": "1y", "keepBooted": true,
     "projects": ["demo"], "nodes": 2, "pricePerNodeHour": 36},
    {"machineType": "a3-megagpu-8g", "model": "SPOT", "nodes": 3, "pricePerNodeHour": 18}]}]})";

class FailureSimulatorTest : public testing::SimFixture {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartFleet(fleet_json_.c_str()));
    injections_ = std::make_unique<storage::PgFaultInjectionStore>(*pool_);
    injector_ = std::make_unique<FaultInjector>(fleet_, *injections_, clock_);
  }

  FaultInjection Inject(FaultInjection request) {
    auto stored = injector_->Inject(std::move(request));
    EXPECT_TRUE(stored.ok()) << stored.status().message();
    return stored.ok() ? *stored : FaultInjection{};
  }
  FaultInjection PreemptNode(const std::string& node) {
    FaultInjection request;
    request.kind = FaultKind::kSpotPreemption;
    request.node = node;
    return Inject(request);
  }
  FaultInjection FailNode(const std::string& node) {
    FaultInjection request;
    request.kind = FaultKind::kNodeFailure;
    request.node = node;
    return Inject(request);
  }

  static int64_t IdOf(const CustomJob& job) {
    return std::stoll(job.name.substr(job.name.rfind('/') + 1));
  }
  static std::string NodeOf(const CustomJob& job, size_t i = 0) {
    if (!job.trainyard || job.trainyard->pools.empty()) return "";
    std::vector<std::string> nodes;
    for (const PlacedPoolStatus& pool : job.trainyard->pools) {
      nodes.insert(nodes.end(), pool.nodes.begin(), pool.nodes.end());
    }
    return i < nodes.size() ? nodes[i] : "";
  }

  // The job's events as "FROM>TO reason", in order.
  std::vector<std::string> Events(const CustomJob& job) {
    auto conn = pool_->Acquire();
    auto r = (*conn)->Exec(
        "SELECT from_state, to_state, reason FROM job_events WHERE job_id = $1::bigint ORDER BY "
        "seq",
        {std::to_string(IdOf(job))});
    std::vector<std::string> out;
    if (!r.ok()) return out;
    for (int i = 0; i < r->rows(); ++i) {
      out.push_back(std::string(r->Get(i, 0)) + ">" + std::string(r->Get(i, 1)) + " " +
                    std::string(r->Get(i, 2)));
    }
    return out;
  }

  // Virtual time the job spent RUNNING, from its events.
  Duration RunningTime(const CustomJob& job) {
    auto conn = pool_->Acquire();
    auto r = (*conn)->Exec(
        "SELECT to_state, (extract(epoch from time) * 1000000)::bigint FROM job_events "
        "WHERE job_id = $1::bigint AND from_state <> to_state ORDER BY seq",
        {std::to_string(IdOf(job))});
    Duration total{};
    std::optional<int64_t> since;
    for (int i = 0; r.ok() && i < r->rows(); ++i) {
      int64_t at = r->GetInt64(i, 1);
      if (since) total += std::chrono::microseconds(at - *since);
      since = r->GetInt64(i, 0) == static_cast<int>(JobState::kRunning) ? std::optional(at)
                                                                        : std::nullopt;
    }
    return total;
  }

  // The RUNNING job still runs just before `left` has passed, and has SUCCEEDED at `left`.
  void RunsFor(const CustomJob& job, Duration left) {
    clock_.Advance(std::chrono::duration_cast<std::chrono::microseconds>(left) - 1s);
    Step();
    EXPECT_EQ(Get(job).state, JobState::kRunning) << "1s before the end";
    clock_.Advance(1s);
    Step();
    EXPECT_EQ(Get(job).state, JobState::kSucceeded);
  }

  // A 600 s spot job that, once booted and pulled (68 s), runs `ran` before its node gets a
  // notice, and is reclaimed 30 s later (requeued and admitted again in that pass).
  CustomJob ReclaimedAfter(Duration ran) {
    CustomJob job = Create(0, SchedulingStrategy::kSpot, "", "600s");
    Step();
    clock_.Advance(68s);
    Step();
    EXPECT_EQ(Get(job).state, JobState::kRunning);
    clock_.Advance(std::chrono::duration_cast<std::chrono::microseconds>(ran));
    PreemptNode(NodeOf(Get(job)));
    Step();
    clock_.Advance(30s);
    Step();
    return job;
  }

  bool HasEvent(const CustomJob& job, const std::string& text) {
    for (const std::string& e : Events(job)) {
      if (e.find(text) != std::string::npos) return true;
    }
    return false;
  }

  std::string fleet_json_ = kFleet;
  std::unique_ptr<storage::PgFaultInjectionStore> injections_;
  std::unique_ptr<FaultInjector> injector_;
};

TEST_F(FailureSimulatorTest, SpotPreemptionGivesNoticeRequeuesAndTheJobFinishesOnNewCapacity) {
  checkpoint_interval_ = "60s";
  CustomJob job = Create(0, SchedulingStrategy::kSpot, "", "600s");
  Step();
  clock_.Advance(68s);  // cold boot 60s + pull 8s
  Step();
  CustomJob running = Get(job);
  ASSERT_EQ(running.state, JobState::kRunning);
  const std::string first_node = NodeOf(running);
  clock_.Advance(100s);

  FaultInjection injection = PreemptNode(first_node);
  Step();
  CustomJob noticed = Get(job);
  EXPECT_EQ(noticed.state, JobState::kRunning) << "the replicas run through the 30s notice";
  EXPECT_EQ(noticed.trainyard->reason_code, "SPOT_NOTICE");
  EXPECT_NE(noticed.trainyard->reason_message.find(first_node), std::string::npos);
  auto applied = injector_->Get(injection.id);
  ASSERT_TRUE(applied.ok());
  EXPECT_TRUE(applied->apply_time);
  EXPECT_EQ(applied->outcome, "preemption notice given to " + first_node);

  clock_.Advance(29s);
  Step();
  EXPECT_EQ(Get(job).state, JobState::kRunning);
  clock_.Advance(1s);
  Step();  // reclaimed, requeued, and re-admitted in the same leader pass
  CustomJob restarted = Get(job);
  EXPECT_EQ(restarted.state, JobState::kPending);
  EXPECT_EQ(restarted.trainyard->spot_restarts, 1);
  EXPECT_NE(NodeOf(restarted), first_node) << "new capacity, not the reclaimed VM";
  EXPECT_TRUE(HasEvent(job, "3>1 spot capacity reclaimed (node " + first_node +
                                "); restart 1 of 6, back in the queue"));
  EXPECT_EQ(NodesInState(4), 1) << "the reclaimed node is PREEMPTED";
  // The first admission's cost is kept: 198s (boot, pull, 130s of running) at $18/h.
  EXPECT_NEAR(restarted.trainyard->cost_usd, 18.0 * 198 / 3600, 1e-3);

  clock_.Advance(60s);
  Step();
  EXPECT_EQ(NodesInState(4), 0) << "given back after the preemption";
  clock_.Advance(8s);  // 68s of boot and pull in all
  Step();
  ASSERT_EQ(Get(job).state, JobState::kRunning);
  // 130s ran before the preemption: two checkpoints (120s) hold, 10s is done again.
  RunsFor(job, 480s);
  CustomJob done = Get(job);
  EXPECT_EQ(RunningTime(job), 610s);
  EXPECT_NEAR(done.trainyard->cost_usd, 18.0 * (198 + 68 + 480) / 3600, 1e-3);
  const JobGoodput& g = done.trainyard->goodput;
  EXPECT_EQ(g.waiting, 0s) << "admitted at once";
  EXPECT_EQ(g.starting, 68s) << "the first boot and pull";
  EXPECT_EQ(g.running, 610s);
  EXPECT_EQ(g.redone, 10s) << "the work since the last checkpoint";
  EXPECT_EQ(g.restarting, 68s) << "back in the queue, then boot and pull on new capacity";
  EXPECT_EQ(g.Productive(), 600s) << "exactly the job's work";
  EXPECT_NEAR(*g.Ratio(), 600.0 / 746, 1e-9);
  // $18/h for 746 s of one node, over 600 productive seconds of its 8 GPUs.
  EXPECT_NEAR(*CostPerProductiveAcceleratorHour(*done.trainyard),
              18.0 * 746 / 3600 / (600.0 / 3600 * 8), 1e-6);
}

// A workload that writes an emergency checkpoint in the 30 s notice (and can: 20 s of saving)
// loses only the notice, not the work since its last periodic checkpoint.
TEST_F(FailureSimulatorTest, AnEmergencyCheckpointInTheNoticeLosesOnlyTheNotice) {
  primary_env_ = {{"TRAINYARD_EMERGENCY_CHECKPOINT_TIME", "20s"}};
  // Reclaimed 130 s into the run, its periodic checkpoint 600 s away: the save at the notice
  // holds the first 100.
  CustomJob job = ReclaimedAfter(100s);
  ASSERT_EQ(Get(job).state, JobState::kPending);
  EXPECT_EQ(Get(job).trainyard->goodput.redone, 30s) << "the notice, not 130 s since no checkpoint";
  clock_.Advance(68s);
  Step();
  ASSERT_EQ(Get(job).state, JobState::kRunning);
  RunsFor(job, 500s);
  EXPECT_EQ(RunningTime(job), 630s);
  EXPECT_EQ(Get(job).trainyard->goodput.Productive(), 600s) << "exactly the job's work";

  // A save that does not fit in the notice is no save: the 130 s go.
  primary_env_ = {{"TRAINYARD_EMERGENCY_CHECKPOINT_TIME", "45s"}};
  CustomJob slow = ReclaimedAfter(100s);
  EXPECT_EQ(Get(slow).trainyard->goodput.redone, 130s);
}

// Saves and restores cost run time (ML Goodput's UNPRODUCTIVE_CHECKPOINT_SAVE_TIME and _RESTORE_
// TIME): with a save of 10 s after every 100 s of work, a run reclaimed at 280 s kept 200 s (two
// saves), redoes 60; resumed, it restores (20 s), then runs the 400 s left with 3 saves. What it
// ran less what checkpoints and the lost work took is exactly its work.
TEST_F(FailureSimulatorTest, CheckpointSavesAndRestoresCostRunTimeAndAreNotProductive) {
  checkpoint_interval_ = "100s";
  primary_env_ = {{"TRAINYARD_CHECKPOINT_SAVE_TIME", "10s"},
                  {"TRAINYARD_CHECKPOINT_RESTORE_TIME", "20s"}};
  CustomJob job = ReclaimedAfter(250s);
  JobGoodput g = Get(job).trainyard->goodput;
  EXPECT_EQ(g.redone, 60s);
  EXPECT_EQ(g.checkpoint_save, 20s);
  EXPECT_EQ(g.checkpoint_restore, 0s) << "the first run restores nothing";
  clock_.Advance(68s);
  Step();
  ASSERT_EQ(Get(job).state, JobState::kRunning);
  RunsFor(job, 450s);
  g = Get(job).trainyard->goodput;
  EXPECT_EQ(g.running, 730s);
  EXPECT_EQ(g.checkpoint_save, 50s);
  EXPECT_EQ(g.checkpoint_restore, 20s);
  EXPECT_EQ(g.Productive(), 600s) << "exactly the job's work";
}

TEST_F(FailureSimulatorTest, AJobThatNeverCheckpointsRedoesAllItsWorkAfterAPreemption) {
  checkpoint_interval_ = "0s";
  CustomJob job = ReclaimedAfter(100s);
  ASSERT_EQ(Get(job).state, JobState::kPending);
  EXPECT_EQ(Get(job).trainyard->goodput.redone, 130s) << "every second it ran is lost";
  clock_.Advance(68s);
  Step();
  ASSERT_EQ(Get(job).state, JobState::kRunning);
  RunsFor(job, 600s);
  EXPECT_EQ(Get(job).trainyard->goodput.Productive(), 600s);
}

TEST_F(FailureSimulatorTest, GoodputShowsTheCurrentStateSoFar) {
  CustomJob job = Create(0, SchedulingStrategy::kSpot, "", "600s");
  Step();
  clock_.Advance(20s);
  EXPECT_EQ(Get(job).trainyard->goodput.starting, 20s) << "booting for 20s so far";
  clock_.Advance(48s);
  Step();
  clock_.Advance(32s);
  const JobGoodput g = Get(job).trainyard->goodput;
  EXPECT_EQ(g.starting, 68s);
  EXPECT_EQ(g.running, 32s);
  EXPECT_NEAR(*g.Ratio(), 32.0 / 100, 1e-9);
}

TEST_F(FailureSimulatorTest, SpotRestartsExhaustedFailsTheJobWithStockout) {
  CustomJob job = Create(0, SchedulingStrategy::kSpot, "", "36000s");
  Step();
  for (int restart = 1; restart <= 6; ++restart) {
    CustomJob placed = Get(job);
    ASSERT_EQ(placed.state, JobState::kPending) << "restart " << restart;
    PreemptNode(NodeOf(placed));
    Step();
    clock_.Advance(30s);
    Step();
    EXPECT_EQ(Get(job).trainyard->spot_restarts, restart);
    clock_.Advance(60s);  // the reclaimed node is given back
    Step();
  }
  EXPECT_TRUE(HasEvent(job, "restart 6 of 6"));
  CustomJob last = Get(job);
  ASSERT_EQ(last.state, JobState::kPending);
  PreemptNode(NodeOf(last));
  Step();
  clock_.Advance(30s);
  Step();
  CustomJob failed = Get(job);
  EXPECT_EQ(failed.state, JobState::kFailed);
  ASSERT_TRUE(failed.error);
  EXPECT_EQ(failed.error->code, 8);
  EXPECT_EQ(failed.error->message,
            "STOCKOUT: spot capacity reclaimed (node " + NodeOf(last) +
                "); the job was already restarted 6 times after spot preemptions (the most Vertex "
                "allows), so it fails.");
  EXPECT_GT(failed.trainyard->cost_usd, 0) << "seven admissions were paid for";
  EXPECT_EQ(NodesInState(1) + NodesInState(2) + NodesInState(3), 2)
      << "only the two warm reservation nodes stay up";
}

TEST_F(FailureSimulatorTest, DisableRetriesFailsAtTheFirstPreemption) {
  CustomJob spec = Create(0, SchedulingStrategy::kSpot, "", "600s");
  // A second job built the same way, with scheduling.disableRetries set.
  CustomJob request;
  request.display_name = "no-retries";
  request.job_spec = spec.job_spec;
  request.job_spec.scheduling->disable_retries = true;
  auto created = service_->Create(ParentRef{"demo", "us-central1"}, request, "");
  ASSERT_TRUE(created.ok()) << created.status().message();
  Step();
  CustomJob placed = Get(*created);
  ASSERT_EQ(placed.state, JobState::kPending);
  PreemptNode(NodeOf(placed));
  Step();
  clock_.Advance(30s);
  Step();
  CustomJob failed = Get(*created);
  EXPECT_EQ(failed.state, JobState::kFailed);
  ASSERT_TRUE(failed.error);
  EXPECT_NE(failed.error->message.find("disableRetries"), std::string::npos);
  EXPECT_EQ(Get(spec).state, JobState::kPending) << "the other job was not touched";
}

TEST_F(FailureSimulatorTest, NodeFailureRepairsAndTheGangResumesFromItsLastCheckpoint) {
  CustomJob job = Create(1, SchedulingStrategy::kStandard, "", "600s");  // 2 warm nodes
  Step();
  clock_.Advance(8s);  // image pull
  Step();
  CustomJob running = Get(job);
  ASSERT_EQ(running.state, JobState::kRunning);
  const std::string node = NodeOf(running, 1);
  clock_.Advance(200s);

  FailNode(node);
  Step();
  CustomJob waiting = Get(job);
  EXPECT_EQ(waiting.state, JobState::kPending);
  EXPECT_EQ(waiting.trainyard->reason_code, "NODE_REPAIR");
  EXPECT_NE(waiting.trainyard->reason_message.find(node + " failed"), std::string::npos);
  EXPECT_EQ(NodesInState(5), 1) << "FAILED";
  Step();
  EXPECT_EQ(NodesInState(6), 1) << "REPAIRING";
  clock_.Advance(599s);
  Step();
  EXPECT_EQ(Get(job).state, JobState::kPending) << "still repairing";
  clock_.Advance(1s);
  Step();
  EXPECT_EQ(NodesInState(6), 0) << "repaired after 600s";
  EXPECT_EQ(NodesInState(3), 2) << "both of the job's nodes are BUSY again";
  CustomJob repaired = Get(job);
  EXPECT_EQ(repaired.state, JobState::kPending) << "the new VM pulls the image first";
  EXPECT_NE(repaired.trainyard->reason_message.find(node + " repaired"), std::string::npos);
  clock_.Advance(8s);
  Step();
  ASSERT_EQ(Get(job).state, JobState::kRunning);
  EXPECT_EQ(NodeOf(Get(job), 1), node) << "the same placement: GKE recreates the node by name";
  // 200s ran before the failure, and the default checkpoint interval is 10 minutes: it all
  // went, and the run starts over.
  RunsFor(job, 600s);
  CustomJob done = Get(job);
  EXPECT_EQ(RunningTime(job), 800s);
  EXPECT_EQ(done.trainyard->goodput.redone, 200s);
  EXPECT_EQ(done.trainyard->goodput.restarting, 608s) << "the repair and the new VM's pull";
  EXPECT_TRUE(HasEvent(job, "3>2 node " + node + " failed"));
  EXPECT_EQ(NodesInState(2), 2) << "both reservation nodes warm again";
  // The nodes were held (and paid for) through the repair: 8 + 200 + 600 + 8 + 600 s.
  EXPECT_NEAR(done.trainyard->cost_usd, 72.0 * 1416 / 3600, 1e-3);
}

TEST_F(FailureSimulatorTest, ACancelDuringTheRepairEndsTheJobAndTheNodeStillGetsRepaired) {
  CustomJob job = Create(1, SchedulingStrategy::kStandard, "", "600s");
  Step();
  clock_.Advance(8s);
  Step();
  ASSERT_EQ(Get(job).state, JobState::kRunning);
  FailNode(NodeOf(Get(job), 0));
  Step();
  Step();
  ASSERT_EQ(NodesInState(6), 1);
  ASSERT_TRUE(service_
                  ->Cancel(JobRef{ParentRef{"demo", "us-central1"},
                                  job.name.substr(job.name.rfind('/') + 1)})
                  .ok());
  Step();
  EXPECT_EQ(Get(job).state, JobState::kCancelled);
  EXPECT_EQ(NodesInState(6), 1) << "the job's end does not cut the repair short";
  EXPECT_EQ(NodesInState(2), 1) << "the healthy node is warm again";
  clock_.Advance(600s);
  Step();
  EXPECT_EQ(NodesInState(2), 2) << "the repaired reservation node is READY";
}

TEST_F(FailureSimulatorTest, APriorityPreemptionVictimAlsoKeepsItsCheckpoints) {
  checkpoint_interval_ = "60s";
  CustomJob low = Create(1, SchedulingStrategy::kStandard, "low", "600s");  // both warm nodes
  Step();
  clock_.Advance(8s);
  Step();
  ASSERT_EQ(Get(low).state, JobState::kRunning);
  clock_.Advance(100s);
  CustomJob high = Create(0, SchedulingStrategy::kStandard, "high", "60s");
  Step();  // the victim is told and runs out its 30 s termination grace
  ASSERT_EQ(Get(high).state, JobState::kQueued);
  EXPECT_EQ(Get(high).trainyard->reason_code, "PREEMPTING");
  EXPECT_EQ(Get(low).state, JobState::kRunning);
  clock_.Advance(30s);
  Step();  // on a freed warm node with the image cached: RUNNING at once
  ASSERT_EQ(Get(high).state, JobState::kRunning);
  EXPECT_EQ(Get(low).state, JobState::kQueued);
  clock_.Advance(60s);
  Step();
  ASSERT_EQ(Get(high).state, JobState::kSucceeded);
  Step();  // re-admitted on both warm, cached nodes: RUNNING at once
  ASSERT_EQ(Get(low).state, JobState::kRunning);
  RunsFor(low, 480s);  // the checkpoint at 120 s of the 130 s it ran holds
  EXPECT_EQ(RunningTime(low), 610s);
  EXPECT_EQ(Get(low).trainyard->goodput.redone, 10s);
}

// A victim that saves when told (its save fits the grace) loses only the grace, not the work
// since its last periodic checkpoint.
TEST_F(FailureSimulatorTest, APriorityPreemptionVictimThatSavesInItsGraceLosesOnlyTheGrace) {
  checkpoint_interval_ = "600s";
  primary_env_ = {{"TRAINYARD_EMERGENCY_CHECKPOINT_TIME", "20s"}};
  CustomJob low = Create(1, SchedulingStrategy::kStandard, "low", "600s");
  Step();
  clock_.Advance(8s);
  Step();
  ASSERT_EQ(Get(low).state, JobState::kRunning);
  clock_.Advance(100s);
  primary_env_ = {};
  CustomJob high = Create(0, SchedulingStrategy::kStandard, "high", "60s");
  Step();
  clock_.Advance(30s);
  Step();
  ASSERT_EQ(Get(low).state, JobState::kQueued);
  EXPECT_EQ(Get(low).trainyard->goodput.redone, 30s) << "the grace, not 130 s since no checkpoint";
  EXPECT_NE(Get(low).trainyard->reason_message.find("its emergency checkpoint kept its progress"),
            std::string::npos)
      << Get(low).trainyard->reason_message;
}

TEST_F(FailureSimulatorTest, AFreeNodeFailsAndComesBackWithoutAJob) {
  FaultInjection injection = FailNode("us-central1-a-a3-megagpu-8g-RESERVATION-r1-0000");
  Step();
  EXPECT_EQ(NodesInState(5), 1);
  auto applied = injector_->Get(injection.id);
  ASSERT_TRUE(applied.ok());
  EXPECT_NE(applied->outcome.find("FAILED; repaired at"), std::string::npos);
  // A 2-node gang cannot start while one of the two reserved nodes is down.
  CustomJob job = Create(1, SchedulingStrategy::kStandard, "", "60s");
  Step();
  EXPECT_EQ(Get(job).state, JobState::kQueued);
  clock_.Advance(600s);
  Step();
  EXPECT_EQ(NodesInState(6), 0);
  EXPECT_EQ(Get(job).state, JobState::kPending) << "admitted once the node is back";
}

TEST_F(FailureSimulatorTest, FailingANodeWithNoVmChangesNothing) {
  FaultInjection injection = FailNode("us-central1-a-a3-megagpu-8g-SPOT-0002");  // never booted
  Step();
  auto applied = injector_->Get(injection.id);
  ASSERT_TRUE(applied.ok());
  EXPECT_EQ(applied->outcome,
            "node us-central1-a-a3-megagpu-8g-SPOT-0002 has no running VM; nothing failed");
  EXPECT_EQ(NodesInState(5), 0);
}

TEST_F(FailureSimulatorTest, InjectionsNameTheBadField) {
  FaultInjection bad;
  bad.kind = FaultKind::kSpotPreemption;
  bad.pool_id = "us-central1-a/a3-megagpu-8g/RESERVATION/r1";
  auto refused = injector_->Inject(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(refused.status().message(),
            "pool: pool us-central1-a/a3-megagpu-8g/RESERVATION/r1 is not a SPOT pool");
}

// Hazards drawn from the fleet's seed over hours of virtual time, each run on a fresh database.
class FleetHazardTest : public FailureSimulatorTest {
 protected:
  // One zone with a 4-node pool of `model` whose capacity comes and goes (2 h available, 1 h
  // constrained to a quarter or a half on average, seed 11); its first fall and recovery.
  std::pair<CapacityStep, CapacityStep> StartComingAndGoing(const std::string& model) {
    fleet_json_ = R"({"seed": 11, "bootTime": {"default": "60s"}, "imageSizeGb": {"default": 10},
      "zones": [{"zone": "us-central1-a", "pools": [{"machineType": "a3-megagpu-8g", "model": ")" +
                  model + R"(", "nodes": 4, "availability": {"meanAvailable": "7200s",
      "meanConstrained": "3600s", "minShareLeft": 0.25, "maxShareLeft": 0.5}}]}]})";
    TearDownStack();
    SetUp();
    const std::vector<CapacityStep>& steps = fleet_.pools[0].capacity_steps;
    EXPECT_GE(steps.size(), 3u);
    EXPECT_LT(steps[1].units, 4);
    EXPECT_EQ(steps[2].units, 4);
    EXPECT_GT(steps[1].after, 10min) << "seed 11 should leave time to start the jobs";
    return {steps[1], steps[2]};
  }
  // Advances the clock to `since_epoch` after the fleet's epoch (if that is still ahead).
  void Until(Duration since_epoch) {
    const Timestamp at =
        fleet_.epoch + std::chrono::duration_cast<std::chrono::microseconds>(since_epoch);
    if (at > clock_.Now()) clock_.Advance(at - clock_.Now());
  }

  // Three long spot jobs for 3 hours under a high hazard; the preemption notices, in order.
  std::vector<std::string> Scenario(int seed) {
    fleet_json_ = R"({"seed": )" + std::to_string(seed) + R"(,
      "bootTime": {"default": "60s"}, "imagePullGbps": 10, "imageSizeGb": {"default": 10},
      "zones": [{"zone": "us-central1-a", "pools": [
        {"machineType": "a3-megagpu-8g", "model": "SPOT", "nodes": 4, "pricePerNodeHour": 18,
         "preemptionsPerNodeHour": 1.5}]}]})";
    TearDownStack();
    clock_.Set(FromUnixMicros(1'800'000'000'000'000));
    SetUp();
    for (int i = 0; i < 3; ++i) {
      Create(0, SchedulingStrategy::kSpot, "", "5400s");
      clock_.Advance(1s);
    }
    for (int minute = 0; minute < 180; ++minute) {
      clock_.Advance(60s);
      Step();
    }
    auto conn = pool_->Acquire();
    auto r = (*conn)->Exec(
        "SELECT reason FROM job_events WHERE reason LIKE 'spot preemption notice%' ORDER BY time, "
        "reason");
    std::vector<std::string> notices;
    for (int i = 0; r.ok() && i < r->rows(); ++i) notices.emplace_back(r->Get(i, 0));
    return notices;
  }

  void TearDownStack() {
    injector_.reset();
    injections_.reset();
    StopFleet();
  }
};

TEST_F(FleetHazardTest, APoolsFailureHazardFailsAndRepairsNodesUnderAJob) {
  fleet_json_ = R"({"seed": 3, "repairTime": "600s", "imageSizeGb": {"default": 10},
    "zones": [{"zone": "us-central1-a", "pools": [
      {"machineType": "a3-megagpu-8g", "model": "RESERVATION", "reservation": "r1", "term": "1y",
       "keepBooted": true, "nodes": 2, "failuresPerNodeHour": 1.0}]}]})";
  TearDownStack();
  SetUp();
  CustomJob job = Create(1, SchedulingStrategy::kStandard, "", "7200s");
  for (int minute = 0; minute < 240; ++minute) {
    clock_.Advance(60s);
    Step();
  }
  EXPECT_TRUE(HasEvent(job, "failed; the whole gang stops and restarts when it is repaired"));
  CustomJob done = Get(job);
  EXPECT_EQ(done.state, JobState::kSucceeded) << "2h of work fits in 4h despite the repairs";
  EXPECT_GT(done.trainyard->goodput.redone, 0s) << "a failure lost the work since a checkpoint";
  EXPECT_EQ(RunningTime(job), 7200s + done.trainyard->goodput.redone);
  EXPECT_EQ(done.trainyard->goodput.Productive(), 7200s) << "exactly the job's work";
}

// Spot capacity falls and comes back (services/fleet/spot_availability.h): when it falls, the nodes
// beyond what is left get their notices together at the fall and are reclaimed 30 s later; their
// jobs wait while the pool offers less, and run again when it recovers.
TEST_F(FleetHazardTest, SpotCapacityThatFallsReclaimsTheNodesBeyondItTogether) {
  const auto [fall, back] = StartComingAndGoing("SPOT");
  ASSERT_FALSE(HasFailure());
  std::vector<CustomJob> jobs;
  for (int i = 0; i < 4; ++i) jobs.push_back(Create(0, SchedulingStrategy::kSpot, "", "86400s"));
  Step();
  Until(fall.after - 1s);
  Step();
  for (const CustomJob& job : jobs) ASSERT_EQ(Get(job).state, JobState::kRunning);
  EXPECT_EQ(fleet_.pools[0].UnitsAvailableAt(clock_.Now(), fleet_.epoch), 4);

  Until(fall.after + 61s);  // the fall's minute has been drawn; its notices are due
  Step();
  EXPECT_EQ(fleet_.pools[0].UnitsAvailableAt(clock_.Now(), fleet_.epoch), fall.units);
  int requeued = 0, running = 0;
  for (const CustomJob& job : jobs) {
    CustomJob now = Get(job);
    if (now.state == JobState::kQueued) {
      ++requeued;
      EXPECT_EQ(now.trainyard->spot_restarts, 1);
      EXPECT_TRUE(HasEvent(job, "spot capacity of us-central1-a a3-megagpu-8g fell to " +
                                    std::to_string(fall.units) + " of 4"));
      EXPECT_EQ(now.trainyard->reason_code, "NO_CAPACITY") << "the pool has no more to offer";
    } else if (now.state == JobState::kRunning) {
      ++running;
    }
  }
  EXPECT_EQ(running, fall.units);
  EXPECT_EQ(requeued, 4 - fall.units) << "the nodes beyond what is left went together";

  Until(back.after - 1s);
  Step();
  int waiting = 0;
  for (const CustomJob& job : jobs) waiting += Get(job).state == JobState::kQueued;
  EXPECT_EQ(waiting, 4 - fall.units) << "nothing more while the pool is short";
  Until(back.after + 1s);
  Step();
  for (const CustomJob& job : jobs) {
    EXPECT_NE(Get(job).state, JobState::kQueued) << "the capacity is back: admitted again";
  }
}

// One zone's on-demand and spot share its capacity (services/fleet/zone_capacity.h): four spot jobs
// fill it, and when two on-demand jobs arrive they are admitted at once and two spot nodes get
// their notices and are reclaimed: spot shrinks first. Another spot job then waits.
TEST_F(FleetHazardTest, OnDemandDemandReclaimsSpotFromTheZonesSharedCapacity) {
  fleet_json_ = R"({"seed": 5, "bootTime": {"default": "60s"}, "imageSizeGb": {"default": 10},
    "zones": [{"zone": "us-central1-a", "pools": [
      {"machineType": "a3-megagpu-8g", "model": "ON_DEMAND", "nodes": 4},
      {"machineType": "a3-megagpu-8g", "model": "SPOT", "nodes": 4}],
     "capacity": [{"machineType": "a3-megagpu-8g", "nodes": 4,
                   "outsideOnDemand": {"minShareLeft": 1, "maxShareLeft": 1}}]}]})";
  TearDownStack();
  SetUp();
  ASSERT_FALSE(HasFailure());
  std::vector<CustomJob> spot;
  for (int i = 0; i < 4; ++i) spot.push_back(Create(0, SchedulingStrategy::kSpot, "", "86400s"));
  Step();
  clock_.Advance(120s);
  Step();
  for (const CustomJob& job : spot) ASSERT_EQ(Get(job).state, JobState::kRunning);

  CustomJob first = Create(0, SchedulingStrategy::kOnDemand, "", "86400s");
  CustomJob second = Create(0, SchedulingStrategy::kOnDemand, "", "86400s");
  Step();
  EXPECT_EQ(Get(first).state, JobState::kPending) << "on-demand draws first: admitted at once";
  EXPECT_EQ(Get(second).state, JobState::kPending);
  clock_.Advance(1s);  // the fleet's failures (run before the cycle) see the on-demand nodes
  Step();
  clock_.Advance(31s);  // the notices are due
  Step();
  int requeued = 0;
  for (const CustomJob& job : spot) {
    if (Get(job).state != JobState::kQueued) continue;
    ++requeued;
    EXPECT_TRUE(HasEvent(job,
                         "on-demand demand in us-central1-a took the a3-megagpu-8g capacity "
                         "spot had (2 of 4 left to spot)"));
  }
  EXPECT_EQ(requeued, 2) << "exactly what on-demand took";
  CustomJob late = Create(0, SchedulingStrategy::kSpot, "", "600s");
  clock_.Advance(120s);
  Step();
  EXPECT_EQ(Get(late).state, JobState::kQueued) << "spot has nothing left to offer";
}

// An on-demand stockout stops new VMs only: the jobs running when it begins keep their nodes,
// and a new one waits with the stockout named until it ends.
TEST_F(FleetHazardTest, AnOnDemandStockoutLeavesRunningVmsAndHoldsNewOnes) {
  const auto [fall, back] = StartComingAndGoing("ON_DEMAND");
  ASSERT_FALSE(HasFailure());
  std::vector<CustomJob> jobs;
  for (int i = 0; i < 4; ++i) {
    jobs.push_back(Create(0, SchedulingStrategy::kOnDemand, "", "86400s"));
  }
  Step();
  Until(fall.after + 120s);
  Step();
  for (const CustomJob& job : jobs) EXPECT_EQ(Get(job).state, JobState::kRunning);
  EXPECT_EQ(NodesInState(3), 4) << "no on-demand VM is taken back";
  CustomJob late = Create(0, SchedulingStrategy::kOnDemand, "", "600s");
  Step();
  CustomJob waiting = Get(late);
  EXPECT_EQ(waiting.state, JobState::kQueued);
  EXPECT_NE(waiting.trainyard->reason_message.find(
                "short now: us-central1-a a3-megagpu-8g ON_DEMAND stocked out (" +
                std::to_string(fall.units) + " of 4 obtainable)"),
            std::string::npos)
      << waiting.trainyard->reason_message;
  ASSERT_LT(back.after, 86400s) << "the stockout ends before the jobs do";
  Until(back.after + 1s);
  Step();
  EXPECT_EQ(Get(late).state, JobState::kQueued) << "all 4 nodes are still busy";
}

// A DWS calendar-mode reservation ends: a job admitted onto it that cannot finish inside the window
// is told so at admission; when the window ends it gets the notice before it and goes back to the
// queue at the end, without spending a spot restart.
TEST_F(FleetHazardTest, ACalendarReservationsEndStopsItsJobsAtTheEndAfterTheNotice) {
  fleet_json_ = R"({"seed": 3, "bootTime": {"default": "60s"}, "imageSizeGb": {"default": 10},
    "zones": [{"zone": "us-central1-a", "pools": [
      {"machineType": "a3-megagpu-8g", "model": "RESERVATION", "reservation": "cal1",
       "term": "calendar", "window": {"after": "0s", "length": "86400s"}, "nodes": 2}]}]})";
  TearDownStack();
  SetUp();
  CustomJob job = Create(0, SchedulingStrategy::kStandard, "", "172800s", "demo");
  Step();
  CustomJob admitted = Get(job);
  ASSERT_EQ(admitted.state, JobState::kPending);
  EXPECT_NE(admitted.trainyard->reason_message.find(
                "it cannot finish before reservation cal1's window ends at"),
            std::string::npos)
      << admitted.trainyard->reason_message;
  Until(86400s - 31s);
  Step();
  EXPECT_EQ(Get(job).state, JobState::kRunning);
  Until(86400s - 30s);
  Step();
  CustomJob noticed = Get(job);
  EXPECT_EQ(noticed.state, JobState::kRunning) << "it runs through the notice";
  EXPECT_EQ(noticed.trainyard->reason_code, "WINDOW_END");
  EXPECT_NE(noticed.trainyard->reason_message.find("reservation cal1's window ends at"),
            std::string::npos)
      << noticed.trainyard->reason_message;
  Until(86400s);
  Step();
  CustomJob ended = Get(job);
  EXPECT_EQ(ended.state, JobState::kQueued);
  EXPECT_EQ(ended.trainyard->spot_restarts, 0) << "the end of a window is no spot reclaim";
  EXPECT_TRUE(HasEvent(job, "reservation cal1's window ended at"));
}

// Twice with the same seed and once with another: the notices (node and time) repeat exactly,
// and differ.
TEST_F(FleetHazardTest, SameSeedReplaysTheSamePreemptions) {
  std::vector<std::string> first = Scenario(42);
  std::vector<std::string> again = Scenario(42);
  std::vector<std::string> other = Scenario(43);
  ASSERT_GE(first.size(), 3u) << "1.5 preemptions per node-hour over 3 hours should hit";
  EXPECT_EQ(first, again);
  EXPECT_NE(first, other);
}

}  // namespace
}  // namespace trainyard
