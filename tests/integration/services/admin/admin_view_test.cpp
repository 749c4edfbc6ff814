// The admin view (services/admin on storage/pg_admin_store) against a real PostgreSQL, with the
// scheduler loop and the executor moving jobs under a manual clock: what an operator reads about
// nodes, reservations, queues, costs and a job's history at each step.
#include <gtest/gtest.h>

#include "services/admin/admin_metrics.h"
#include "services/admin/admin_service.h"
#include "storage/pg_admin_store.h"
#include "tests/integration/sim_fixture.h"

namespace trainyard {
namespace {

using namespace std::chrono_literals;

// Zone a: 2 reserved A3 Mega nodes for project demo (kept booted), 2 on demand, 2 spot. Zone b: a
// calendar reservation of 1 node whose day-long window opens an hour after the epoch. Boot 60s,
// pull 8s.
constexpr const char* kFleet = R"({
  "bootTime": {"default": "60s"}, "imagePullGbps": 10, "imageSizeGb": {"default": 10},
  "zones": [
    {"zone": "us-central1-a", "pools": [
      {"machineType": "a3-megagpu-8g", "model": "RESERVATION", "reservation": "r1", "term": "1y", "keepBooted": true,
       "projects": ["demo"], "nodes": 2, "pricePerNodeHour": 36},
      {"machineType": "a3-megagpu-8g", "model": "ON_DEMAND", "nodes": 2, "pricePerNodeHour": 90},
      {"machineType": "a3-megagpu-8g", "model": "SPOT", "nodes": 2, "pricePerNodeHour": 18}]},
    {"zone": "us-central1-b", "pools": [
      {"machineType": "a3-megagpu-8g", "model": "RESERVATION", "reservation": "cal1",
       "term": "calendar", "window": {"after": "3600s", "length": "86400s"}, "nodes": 1,
       "pricePerNodeHour": 45}]}]})";

constexpr const char* kReservationPool = "us-central1-a/a3-megagpu-8g/RESERVATION/r1";
constexpr const char* kOnDemandPool = "us-central1-a/a3-megagpu-8g/ON_DEMAND";

class AdminViewTest : public testing::SimFixture {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartFleet(kFleet));
    admin_store_ = std::make_unique<storage::PgAdminStore>(*pool_);
    admin_ = std::make_unique<AdminService>(*admin_store_, *projects_, fleet_, clock_);
  }

  // A gang of `nodes` A3 Mega nodes that runs `run` once started.
  CustomJob Create(const std::string& project, SchedulingStrategy strategy, int64_t nodes,
                   const std::string& run = "600s") {
    return CreateGang(project, strategy, nodes - 1, run);
  }

  // A 600 s job on the warm reservation (8 s pull), to the end; then a spot job admitted.
  void RunAReservedJobThenStartASpotOne() {
    CustomJob reserved = Create("demo", SchedulingStrategy::kStandard, 1, "600s");
    Step();
    clock_.Advance(8s);  // warm node: the pull only
    Step();
    clock_.Advance(600s);
    Step();
    ASSERT_EQ(StateOf(reserved, "demo"), JobState::kSucceeded);
    Create("demo", SchedulingStrategy::kSpot, 1, "3600s");
    Step();
  }

  static std::string IdOf(const CustomJob& job) { return job.name.substr(job.name.rfind('/') + 1); }

  JobState StateOf(const CustomJob& job, const std::string& project) {
    auto got = service_->Get(JobRef{ParentRef{project, "us-central1"}, IdOf(job)});
    return got.ok() ? got->state : JobState::kUnspecified;
  }

  const ReservationView* Reservation(const std::vector<ReservationView>& list,
                                     const std::string& name) {
    for (const ReservationView& r : list) {
      if (r.pool->reservation == name) return &r;
    }
    ADD_FAILURE() << "no reservation " << name;
    return nullptr;
  }

  std::unique_ptr<storage::PgAdminStore> admin_store_;
  std::unique_ptr<AdminService> admin_;
};

TEST_F(AdminViewTest, FleetShowsEveryPoolWithItsNodeStates) {
  auto fleet = admin_->FleetStatus();
  ASSERT_TRUE(fleet.ok()) << fleet.status().message();
  ASSERT_EQ(fleet->pools.size(), 4u);
  const PoolView& reserved = fleet->pools[0];
  EXPECT_EQ(reserved.pool->id, kReservationPool);
  EXPECT_EQ(reserved.nodes.by_state.at(NodeState::kReady), 2) << "reservations stay warm";
  EXPECT_EQ(fleet->pools[1].nodes.by_state.at(NodeState::kDeleted), 2) << "on-demand is cold";
  EXPECT_EQ(fleet->pools[3].units_usable_now, 0) << "the calendar window has not opened";

  Create("demo", SchedulingStrategy::kStandard, 1);
  Step();
  fleet = admin_->FleetStatus();
  ASSERT_TRUE(fleet.ok());
  EXPECT_EQ(fleet->pools[0].nodes.with_job, 1);
  EXPECT_EQ(fleet->pools[0].nodes.by_state.at(NodeState::kBusy), 1);
  EXPECT_EQ(fleet->pools[0].nodes.by_state.at(NodeState::kReady), 1);
}

TEST_F(AdminViewTest, ReservationsCountBusyAndFreeNodesAndKnowTheirWindow) {
  Create("demo", SchedulingStrategy::kStandard, 1);
  Step();
  auto list = admin_->Reservations();
  ASSERT_TRUE(list.ok()) << list.status().message();
  ASSERT_EQ(list->size(), 2u);
  const ReservationView* r1 = Reservation(*list, "r1");
  ASSERT_NE(r1, nullptr);
  EXPECT_EQ(r1->pool->projects, std::vector<std::string>{"demo"});
  EXPECT_EQ(r1->pool->term, "1y");
  EXPECT_TRUE(r1->usable_now);
  EXPECT_EQ(r1->nodes_total, 2);
  EXPECT_EQ(r1->nodes_busy, 1);
  EXPECT_EQ(r1->nodes_free, 1);
  EXPECT_EQ(r1->nodes_down, 0);
  const ReservationView* cal = Reservation(*list, "cal1");
  ASSERT_NE(cal, nullptr);
  EXPECT_FALSE(cal->usable_now);
  EXPECT_EQ(cal->nodes_free, 1) << "a reserved node with no VM booted yet is free, not down";
  EXPECT_EQ(cal->nodes_down, 0);
  ASSERT_TRUE(cal->pool->window_start);
  EXPECT_EQ(*cal->pool->window_start, fleet_.epoch + 3600s);
  clock_.Advance(3600s);
  list = admin_->Reservations();
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE(Reservation(*list, "cal1")->usable_now);
}

TEST_F(AdminViewTest, NodesFilterAndPageInPoolOrder) {
  NodeQuery query;
  query.pool = kReservationPool;
  query.limit = 1;
  auto first = admin_->Nodes(query);
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_EQ(first->nodes.size(), 1u);
  EXPECT_EQ(first->nodes[0].ordinal, 0);
  ASSERT_TRUE(first->next);
  query.after = first->next;
  auto second = admin_->Nodes(query);
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->nodes.size(), 1u);
  EXPECT_EQ(second->nodes[0].ordinal, 1);
  EXPECT_FALSE(second->next) << "the pool has two nodes";

  Create("other", SchedulingStrategy::kStandard, 1, "60s");  // cold on-demand node
  Step();
  NodeQuery held;
  held.state = NodeState::kProvisioning;
  auto booting = admin_->Nodes(held);
  ASSERT_TRUE(booting.ok());
  ASSERT_EQ(booting->nodes.size(), 1u);
  EXPECT_EQ(booting->nodes[0].pool_id, kOnDemandPool);
  EXPECT_TRUE(booting->nodes[0].job_id);
  EXPECT_EQ(booting->nodes[0].since, clock_.Now());
  clock_.Advance(68s);  // boot 60s + pull 8s
  Step();
  NodeQuery busy;
  busy.zone = "us-central1-a";
  busy.state = NodeState::kBusy;
  auto running = admin_->Nodes(busy);
  ASSERT_TRUE(running.ok());
  ASSERT_EQ(running->nodes.size(), 1u);
  EXPECT_EQ(running->nodes[0].image_cache, std::vector<std::string>{"nemo:24.07"});

  NodeQuery zone_b;
  zone_b.zone = "us-central1-b";
  auto b = admin_->Nodes(zone_b);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->nodes.size(), 1u);
}

TEST_F(AdminViewTest, UnknownPoolOrZoneIsABadRequestNamingTheParameter) {
  NodeQuery query;
  query.pool = "us-central1-z/a3-megagpu-8g/SPOT";
  auto nodes = admin_->Nodes(query);
  ASSERT_FALSE(nodes.ok());
  EXPECT_EQ(nodes.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(nodes.status().violations().at(0).field, "pool");
  query.pool.clear();
  query.zone = "europe-west4-a";
  nodes = admin_->Nodes(query);
  ASSERT_FALSE(nodes.ok());
  EXPECT_EQ(nodes.status().violations().at(0).field, "zone");
}

TEST_F(AdminViewTest, QueuesListQueuedJobsByPositionWithTheirReasons) {
  CustomJob running = Create("other", SchedulingStrategy::kStandard, 2);
  clock_.Advance(1s);
  CustomJob first = Create("other", SchedulingStrategy::kStandard, 2);
  clock_.Advance(1s);
  CustomJob second = Create("other", SchedulingStrategy::kStandard, 2);
  Step();
  ASSERT_EQ(StateOf(running, "other"), JobState::kPending);

  auto queues = admin_->Queues(100);
  ASSERT_TRUE(queues.ok()) << queues.status().message();
  ASSERT_EQ(queues->size(), 1u);
  const QueueView& q = queues->front();
  EXPECT_EQ(q.project_id, "other");
  EXPECT_EQ(q.location, "us-central1");
  EXPECT_EQ(q.queued, 2);
  int64_t by_reason = 0;
  for (const auto& [reason, jobs] : q.queued_by_reason) by_reason += jobs;
  EXPECT_EQ(by_reason, 2) << "every queued job counted under its reason";
  EXPECT_EQ(q.pending, 1);
  EXPECT_EQ(q.running, 0);
  ASSERT_EQ(q.jobs.size(), 2u);
  EXPECT_EQ(q.jobs[0].name, first.name);
  EXPECT_EQ(q.jobs[0].record.queue_position, 1);
  EXPECT_EQ(q.jobs[1].name, second.name);
  EXPECT_EQ(q.jobs[1].record.queue_position, 2);
  EXPECT_EQ(q.jobs[0].record.reason_code, "NO_CAPACITY");
  EXPECT_FALSE(q.jobs[0].record.reason_message.empty());
  EXPECT_EQ(q.jobs[0].priority, 500);

  clock_.Advance(68s);
  Step();
  queues = admin_->Queues(1);
  ASSERT_TRUE(queues.ok());
  EXPECT_EQ(queues->front().running, 1);
  EXPECT_EQ(queues->front().queued, 2) << "counts cover the whole queue";
  ASSERT_EQ(queues->front().jobs.size(), 1u) << "only the head is listed";
  EXPECT_EQ(queues->front().jobs[0].name, first.name);
}

// The console's counts: by state, each bounded by the cap, so they cost the same over a million
// jobs as over ten.
TEST_F(AdminViewTest, StateCountsCountEachStateUpToTheCap) {
  ASSERT_NO_FATAL_FAILURE(RunAReservedJobThenStartASpotOne());
  for (int i = 0; i < 3; ++i)
    Create("demo", SchedulingStrategy::kStandard, 64, "600s");  // never fit
  auto project = projects_->Resolve("demo", false);
  ASSERT_TRUE(project.ok());
  auto counts = admin_store_->StateCounts(project->number, "us-central1", 2);
  ASSERT_TRUE(counts.ok()) << counts.status().message();
  std::map<JobState, int64_t> by_state;
  for (const StateCount& c : *counts) by_state[c.state] = c.jobs;
  EXPECT_EQ(by_state[JobState::kSucceeded], 1);
  EXPECT_EQ(by_state[JobState::kQueued], 2) << "three, counted to the cap of 2";
  EXPECT_EQ(by_state.count(JobState::kFailed), 0u) << "states without jobs are left out";
  auto none = admin_->JobStateCounts("nobody", "us-central1");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty()) << "a project never seen has no jobs";
}

TEST_F(AdminViewTest, CostsSumAccruedAndRunningPerConsumptionModel) {
  ASSERT_NO_FATAL_FAILURE(RunAReservedJobThenStartASpotOne());
  clock_.Advance(1800s);  // half an hour into the spot admission

  auto costs = admin_->ProjectCosts("demo");
  ASSERT_TRUE(costs.ok()) << costs.status().message();
  EXPECT_EQ(costs->project.id, "demo");
  ASSERT_EQ(costs->by_model.size(), 2u);
  const ModelCost& r = costs->by_model[0];  // ordered by model name
  const ModelCost& s = costs->by_model[1];
  EXPECT_EQ(r.consumption_model, "RESERVATION");
  EXPECT_EQ(r.jobs, 1);
  EXPECT_NEAR(r.accrued_micros / 1e6, 36.0 * 608 / 3600, 1e-3);
  EXPECT_EQ(r.running_micros, 0);
  EXPECT_EQ(s.consumption_model, "SPOT");
  EXPECT_EQ(s.accrued_micros, 0);
  EXPECT_NEAR(s.running_micros / 1e6, 18.0 / 2, 1e-3);
  EXPECT_EQ(costs->accrued_micros + costs->running_micros, r.accrued_micros + s.running_micros);
  // 6.08 $ over 600 productive seconds of 8 GPUs; the spot run counts once its admission ends.
  ASSERT_TRUE(r.CostPerProductiveAcceleratorHour());
  EXPECT_NEAR(*r.CostPerProductiveAcceleratorHour(), 6.08 / (600.0 / 3600 * 8), 1e-6);
  EXPECT_FALSE(s.CostPerProductiveAcceleratorHour());
  ASSERT_TRUE(costs->CostPerProductiveAcceleratorHour());
  EXPECT_NEAR(*costs->CostPerProductiveAcceleratorHour(), 4.56, 1e-6);

  auto unknown = admin_->ProjectCosts("nobody");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), Code::kNotFound);
}

// /metrics reads the same tables: the fleet's cost and goodput per consumption model, jobs by
// state and consumption model, nodes by zone, machine type, consumption model and state.
TEST_F(AdminViewTest, MetricsShowCostGoodputJobsAndNodesPerConsumptionModel) {
  ASSERT_NO_FATAL_FAILURE(RunAReservedJobThenStartASpotOne());
  clock_.Advance(1800s);

  metrics::Exposition e;
  ASSERT_TRUE(WriteCostFamilies(*admin_, e).ok());
  ASSERT_TRUE(WriteJobFamilies(*admin_, e).ok());
  ASSERT_TRUE(WriteFleetFamilies(*admin_, e).ok());
  const std::string& text = e.text();
  auto has = [&](const std::string& line) {
    EXPECT_NE(text.find("\n" + line + "\n"), std::string::npos) << line << "\n" << text;
  };
  has(R"(trainyard_job_cost_dollars{consumption_model="RESERVATION",kind="accrued"} 6.08)");
  has(R"(trainyard_job_cost_dollars{consumption_model="SPOT",kind="running"} 9)");
  has(R"(trainyard_job_time_seconds{consumption_model="RESERVATION",bucket="starting"} 8)");
  has(R"(trainyard_job_time_seconds{consumption_model="RESERVATION",bucket="productive"} 600)");
  has(R"(trainyard_goodput_ratio{consumption_model="RESERVATION"} 0.9868421052631579)");
  const std::string per_hour =
      "\ntrainyard_cost_per_productive_accelerator_hour_dollars{consumption_model=\"RESERVATION\"}"
      " ";
  const size_t at = text.find(per_hour);
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_NEAR(std::stod(text.substr(at + per_hour.size())), 6.08 / (600.0 / 3600 * 8), 1e-9);
  has(R"(trainyard_jobs{project="demo",location="us-central1",state="JOB_STATE_PENDING",consumption_model="SPOT"} 1)");
  has(R"(trainyard_nodes{zone="us-central1-a",machine_type="a3-megagpu-8g",consumption_model="SPOT",state="PROVISIONING"} 1)");
  has(R"(trainyard_capacity_units{zone="us-central1-b",machine_type="a3-megagpu-8g",consumption_model="RESERVATION",kind="usable_now"} 0)");
  EXPECT_EQ(text.find("persistent_resource_nodes{"), std::string::npos)
      << "no resources, no series";
}

TEST_F(AdminViewTest, CostOfAJobRequeuedByAPreemptionIsNotPlaced) {
  CustomJob low = CreateGang("other", SchedulingStrategy::kStandard, 1, "3600s",
                             {{"trainyard-priority", "low"}});
  Step();
  clock_.Advance(100s);
  CustomJob high = CreateGang("other", SchedulingStrategy::kStandard, 1, "3600s",
                              {{"trainyard-priority", "high"}});
  Step();
  clock_.Advance(30s);  // the victim's termination grace
  Step();
  ASSERT_EQ(StateOf(low, "other"), JobState::kQueued) << "preempted";
  ASSERT_EQ(StateOf(high, "other"), JobState::kPending);
  clock_.Advance(36s);

  auto costs = admin_->ProjectCosts("other");
  ASSERT_TRUE(costs.ok()) << costs.status().message();
  ASSERT_EQ(costs->by_model.size(), 2u);
  const ModelCost& requeued = costs->by_model[0];
  EXPECT_EQ(requeued.consumption_model, "");
  EXPECT_NEAR(requeued.accrued_micros / 1e6, 2 * 90.0 * 130 / 3600, 1e-3);
  EXPECT_EQ(requeued.running_micros, 0);
  const ModelCost& on_demand = costs->by_model[1];
  EXPECT_EQ(on_demand.consumption_model, "ON_DEMAND");
  EXPECT_NEAR(on_demand.running_micros / 1e6, 2 * 90.0 * 36 / 3600, 1e-3);
}

TEST_F(AdminViewTest, JobEventsAreTheHistoryOldestFirstIncludingReasonChanges) {
  CustomJob blocker = Create("other", SchedulingStrategy::kStandard, 2, "60s");
  clock_.Advance(1s);
  CustomJob job = Create("other", SchedulingStrategy::kStandard, 2, "60s");
  Step();  // the blocker takes both on-demand nodes; job waits with NO_CAPACITY
  clock_.Advance(68s);
  Step();
  clock_.Advance(60s);
  Step();  // blocker done
  Step();  // job admitted
  ASSERT_EQ(StateOf(job, "other"), JobState::kPending);

  auto events = admin_->JobEvents(JobRef{ParentRef{"other", "us-central1"}, IdOf(job)});
  ASSERT_TRUE(events.ok()) << events.status().message();
  // created, NO_CAPACITY, admitted (the simulated boot is waited out before the runtime looks).
  ASSERT_EQ(events->size(), 3u);
  EXPECT_EQ((*events)[0].from, JobState::kUnspecified);
  EXPECT_EQ((*events)[0].to, JobState::kQueued);
  EXPECT_EQ((*events)[0].reason, "created");
  EXPECT_EQ((*events)[1].from, JobState::kQueued);
  EXPECT_EQ((*events)[1].to, JobState::kQueued);
  EXPECT_EQ((*events)[1].reason.rfind("NO_CAPACITY: ", 0), 0u) << (*events)[1].reason;
  EXPECT_EQ((*events)[2].to, JobState::kPending);
  EXPECT_LE((*events)[0].time, (*events)[1].time);
  EXPECT_LE((*events)[1].time, (*events)[2].time);

  for (const JobRef& wrong : {JobRef{ParentRef{"other", "europe-west4"}, IdOf(job)},
                              JobRef{ParentRef{"demo", "us-central1"}, IdOf(job)},
                              JobRef{ParentRef{"nobody", "us-central1"}, IdOf(job)},
                              JobRef{ParentRef{"other", "us-central1"}, "12x"}}) {
    auto none = admin_->JobEvents(wrong);
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(none.status().code(), Code::kNotFound) << none.status().message();
  }
}

}  // namespace
}  // namespace trainyard
