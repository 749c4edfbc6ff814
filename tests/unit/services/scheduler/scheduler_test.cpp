// Scenario tests of the scheduler's pure core on a small hand-built fleet, with explicit times.
#include "services/scheduler/scheduler.h"

#include <gtest/gtest.h>

#include "services/scheduler/verdict_text.h"
#include "tests/unit/services/fleet/shared_zone_fleet.h"

// Scenarios name only the options they change.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace trainyard {
namespace {

using namespace std::chrono_literals;
using CM = ConsumptionModel;

const Timestamp kT0 = FromUnixMicros(1'800'000'000'000'000);

CapacityPool Pool(std::string zone, std::string machine, CM model, int units,
                  std::string reservation = "", std::vector<std::string> projects = {}) {
  CapacityPool p;
  p.zone = zone;
  p.region = "us-central1";
  p.machine_type = machine;
  p.model = model;
  p.units = units;
  p.reservation = reservation;
  p.projects = projects;
  p.id = zone + "/" + machine + "/" + std::string(ConsumptionModelName(model)) + "/" + reservation;
  return p;
}

Fleet TestFleet() {
  Fleet f;
  f.epoch = kT0;
  f.pools.push_back(Pool("us-central1-a", "a3-megagpu-8g", CM::kReservation, 4, "r-a3m", {"demo"}));
  f.pools.push_back(Pool("us-central1-a", "a3-megagpu-8g", CM::kOnDemand, 2));
  f.pools.push_back(Pool("us-central1-a", "a3-megagpu-8g", CM::kSpot, 4));
  CapacityPool flex = Pool("us-central1-a", "a3-megagpu-8g", CM::kFlexStart, 8);
  // A DWS queue without spread or outside demand: a request of n nodes alone is granted after
  // 30 min + n × 15 min.
  flex.dws_queue = {
      .base_wait = 30min, .wait_per_node = 15min, .p95_ratio = 1, .outside_nodes_ahead = 0};
  f.pools.push_back(flex);
  f.pools.push_back(Pool("us-central1-b", "a3-megagpu-8g", CM::kOnDemand, 8));
  CapacityPool tpu = Pool("us-central1-b", "ct5p-hightpu-4t", CM::kOnDemand, 2);
  tpu.tpu_topology = "4x4x4";
  tpu.tpu_chips = 64;
  tpu.hosts_per_unit = 16;
  f.pools.push_back(tpu);
  return f;
}

// Backfill scenarios: one on-demand pool of 8 A3 Mega nodes.
Fleet EightNodeFleet() {
  Fleet f;
  f.epoch = kT0;
  f.pools.push_back(Pool("us-central1-b", "a3-megagpu-8g", CM::kOnDemand, 8));
  return f;
}

enum PoolIndex { kRes = 0, kOnDemandA = 1, kSpotA = 2, kFlexA = 3, kOnDemandB = 4, kTpuB = 5 };

struct JobOptions {
  std::string project = "demo";
  std::string machine = "a3-megagpu-8g";
  int64_t replicas = 1;
  SchedulingStrategy strategy = SchedulingStrategy::kUnspecified;
  std::string priority;
  std::optional<Duration> max_wait;
  std::optional<Duration> timeout;  // scheduling.timeout
  std::string expected_runtime;
  std::string tpu_topology;
  Timestamp created = kT0;
  AcceleratorType attached = AcceleratorType::kUnspecified;  // N1 with GPUs: one per replica
  int32_t accelerator_count = 1;                             // or cloud-tpu's cores
  std::optional<Timestamp> queued_since;  // when it last entered QUEUED (a requeue)
};

SchedulerJob Job(int64_t id, JobOptions o = {}) {
  CustomJob job;
  job.create_time = o.created;
  WorkerPoolSpec wp;
  wp.machine_spec = MachineSpec{};
  wp.machine_spec->machine_type = o.machine;
  wp.machine_spec->tpu_topology = o.tpu_topology;
  if (o.attached != AcceleratorType::kUnspecified) {
    wp.machine_spec->accelerator_type = o.attached;
    wp.machine_spec->accelerator_count = o.accelerator_count;
  }
  wp.replica_count = o.replicas;
  job.job_spec.worker_pool_specs.push_back(wp);
  job.job_spec.scheduling = Scheduling{};
  job.job_spec.scheduling->strategy = o.strategy;
  job.job_spec.scheduling->max_wait_duration = o.max_wait;
  job.job_spec.scheduling->timeout = o.timeout;
  if (!o.priority.empty()) job.labels[std::string(kPriorityLabel)] = o.priority;
  if (!o.expected_runtime.empty()) {
    job.labels[std::string(kExpectedRuntimeLabel)] = o.expected_runtime;
  }
  auto out = MakeSchedulerJob(id, 1, o.project, "us-central1", job, o.queued_since);
  EXPECT_TRUE(out.ok()) << out.status().message();
  return *out;
}

const AdmissionDecision* Admitted(const CycleResult& r, int64_t id) {
  for (const auto& a : r.admissions) {
    if (a.job_id == id) return &a;
  }
  return nullptr;
}

const Verdict* VerdictOf(const CycleResult& r, int64_t id) {
  for (const auto& v : r.verdicts) {
    if (v.job_id == id) return &v.verdict;
  }
  return nullptr;
}

// The cycle reported job `id` waiting with `code` and exactly `message`.
void ExpectVerdict(const CycleResult& r, int64_t id, ReasonCode code, const std::string& message) {
  const Verdict* v = VerdictOf(r, id);
  ASSERT_NE(v, nullptr) << "no verdict for job " << id;
  EXPECT_EQ(v->code, code);
  EXPECT_EQ(v->message, message);
}

// A preemption waits out its victims' termination grace: one cycle tells them (the preemptor
// waits PREEMPTING), the cycle at the grace's end admits it. The second cycle's result, with the
// first's verdicts that the second did not report again (unchanged ones are not).
CycleResult PastGrace(Scheduler& s, const Fleet& fleet, Timestamp t) {
  CycleResult first = s.RunCycle(t);
  CycleResult r = s.RunCycle(
      t + std::chrono::duration_cast<std::chrono::microseconds>(fleet.termination_grace));
  for (const VerdictUpdate& v : first.verdicts) {
    if (VerdictOf(r, v.job_id) == nullptr && Admitted(r, v.job_id) == nullptr) {
      r.verdicts.push_back(v);
    }
  }
  return r;
}

TEST(SchedulerTest, StandardTakesTheReservationThenOnDemand) {
  Fleet fleet = TestFleet();
  Scheduler s(fleet);
  s.UpsertPending(Job(1, {.replicas = 4}));
  s.UpsertPending(Job(2, {.replicas = 2, .created = kT0 + 1s}));
  CycleResult r = s.RunCycle(kT0);
  ASSERT_NE(Admitted(r, 1), nullptr);
  EXPECT_EQ(Admitted(r, 1)->placement.pools[0].pool, kRes);
  ASSERT_NE(Admitted(r, 2), nullptr);
  // The reservation is full; us-central1-b has the most free on-demand nodes.
  EXPECT_EQ(Admitted(r, 2)->placement.pools[0].pool, kOnDemandB);
  EXPECT_NE(Admitted(r, 1)->message.find("RESERVATION (r-a3m)"), std::string::npos);
}

TEST(SchedulerTest, ReservationsServeOnlyTheirOwners) {
  Fleet fleet = TestFleet();
  Scheduler s(fleet);
  s.UpsertPending(Job(1, {.project = "other", .replicas = 2}));
  CycleResult r = s.RunCycle(kT0);
  ASSERT_NE(Admitted(r, 1), nullptr);
  EXPECT_NE(Admitted(r, 1)->placement.pools[0].pool, kRes);
}

TEST(SchedulerTest, GangIsAllOrNothingInOneZone) {
  Fleet fleet = TestFleet();
  Scheduler s(fleet);
  s.UpsertPending(Job(1, {.replicas = 8}));  // takes zone b's 8 on-demand nodes
  s.UpsertPending(Job(2, {.replicas = 6, .created = kT0 + 1s}));  // 4+2 free in zone a, split
  CycleResult r = s.RunCycle(kT0);
  ASSERT_NE(Admitted(r, 1), nullptr);
  EXPECT_EQ(Admitted(r, 1)->placement.zone, "us-central1-b");
  EXPECT_EQ(Admitted(r, 2), nullptr);
  const Verdict* v = VerdictOf(r, 2);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->code, ReasonCode::kNoCapacity) << v->message;
  EXPECT_EQ(v->position, 1);
  EXPECT_EQ(s.FreeUnits(kRes, kT0), 4);  // nothing half-admitted
}

// An on-demand stockout (services/fleet/spot_availability.h): while zone a has 2 of its 8 nodes to
// sell, a 4-node gang goes to zone b; when b is short too it waits, and the reason says which
// pools are short. Nodes already running are not taken back.
TEST(SchedulerTest, AnOnDemandStockoutSendsTheGangToTheNextZoneAndSaysWhatIsShort) {
  Fleet fleet;
  fleet.epoch = kT0;
  fleet.pools.push_back(Pool("us-central1-a", "a3-megagpu-8g", CM::kOnDemand, 8));
  fleet.pools.push_back(Pool("us-central1-b", "a3-megagpu-8g", CM::kOnDemand, 8));
  fleet.pools[0].capacity_steps = {{0s, 8}, {1h, 2}, {3h, 8}};
  fleet.pools[1].capacity_steps = {{0s, 8}, {2h, 3}, {4h, 8}};
  Scheduler s(fleet);
  s.UpsertPending(Job(1, {.replicas = 2}));
  ASSERT_EQ(Admitted(s.RunCycle(kT0), 1)->placement.zone, "us-central1-a");
  s.UpsertPending(Job(2, {.replicas = 4, .created = kT0 + 1s}));
  CycleResult r = s.RunCycle(kT0 + 1h);
  ASSERT_NE(Admitted(r, 2), nullptr);
  EXPECT_EQ(Admitted(r, 2)->placement.zone, "us-central1-b") << "zone a sells 2, and holds 2";
  s.UpsertPending(Job(3, {.replicas = 2, .created = kT0 + 2s}));
  r = s.RunCycle(kT0 + 2h);
  EXPECT_EQ(Admitted(r, 3), nullptr);
  const Verdict* v = VerdictOf(r, 3);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->code, ReasonCode::kNoCapacity);
  EXPECT_NE(v->message.find("short now: us-central1-a a3-megagpu-8g ON_DEMAND stocked out (2 of 8 "
                            "obtainable), us-central1-b a3-megagpu-8g ON_DEMAND stocked out (3 of "
                            "8 obtainable)"),
            std::string::npos)
      << v->message;
  ASSERT_NE(Admitted(s.RunCycle(kT0 + 3h), 3), nullptr) << "zone a sells again";
}

// A DWS pool's capacity cap over time (its availability): a request granted at once is still
// provisioned all at once, so while the pool can give 2 of its 8 nodes a 2-node request runs and a
// 4-node one waits for the capacity to come back, and one behind it waits for what the first
// leaves.
TEST(SchedulerTest, AGrantedFlexStartRequestStillWaitsForItsWholeSize) {
  Fleet fleet;
  fleet.epoch = kT0;
  fleet.pools.push_back(Pool("us-central1-a", "a3-megagpu-8g", CM::kFlexStart, 8));
  fleet.pools[0].dws_queue = {
      .base_wait = 0s, .wait_per_node = 0s, .p95_ratio = 1, .outside_nodes_ahead = 0};
  fleet.pools[0].capacity_steps = {{0s, 2}, {2h, 8}};
  Scheduler s(fleet);
  s.UpsertPending(Job(1, {.replicas = 4, .strategy = SchedulingStrategy::kFlexStart}));
  s.UpsertPending(
      Job(2, {.replicas = 2, .strategy = SchedulingStrategy::kFlexStart, .created = kT0 + 1s}));
  CycleResult r = s.RunCycle(kT0 + 1min);
  EXPECT_EQ(Admitted(r, 1), nullptr);
  EXPECT_EQ(VerdictOf(r, 1)->code, ReasonCode::kWaitingForDws);
  EXPECT_NE(Admitted(r, 2), nullptr) << "2 nodes can be had now";
  s.UpsertPending(
      Job(3, {.replicas = 6, .strategy = SchedulingStrategy::kFlexStart, .created = kT0 + 2s}));
  r = s.RunCycle(kT0 + 2h);
  EXPECT_NE(Admitted(r, 1), nullptr) << "all 8 are back: the 4-node request runs";
  EXPECT_EQ(Admitted(r, 3), nullptr) << "6 more do not fit beside the 6 in use";
}

// A zone's on-demand and spot share one capacity: once on-demand holds 6 of the zone's 10, spot's
// own 8 nodes offer only the 4 left.
TEST(SchedulerTest, SpotGetsWhatOnDemandLeavesOfTheZonesCapacity) {
  Fleet fleet = test::SharedZoneFleet(8, 10);
  fleet.SetEpoch(kT0);
  Scheduler s(fleet);
  s.UpsertPending(Job(1, {.replicas = 6, .strategy = SchedulingStrategy::kOnDemand}));
  ASSERT_NE(Admitted(s.RunCycle(kT0), 1), nullptr);
  s.UpsertPending(
      Job(2, {.replicas = 5, .strategy = SchedulingStrategy::kSpot, .created = kT0 + 1s}));
  s.UpsertPending(
      Job(3, {.replicas = 4, .strategy = SchedulingStrategy::kSpot, .created = kT0 + 2s}));
  CycleResult r = s.RunCycle(kT0 + 1min);
  EXPECT_EQ(Admitted(r, 2), nullptr) << "5 spot nodes: only 4 are left beside on-demand's 6";
  EXPECT_NE(Admitted(r, 3), nullptr);
}

TEST(SchedulerTest, ImpossibleGangNeverFitsAndSaysWhy) {
  Fleet fleet = TestFleet();
  Scheduler s(fleet);
  s.UpsertPending(Job(1, {.replicas = 9}));
  CycleResult r = s.RunCycle(kT0);
  const Verdict* v = VerdictOf(r, 1);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->code, ReasonCode::kNeverFits);
  EXPECT_NE(v->message.find("largest RESERVATION or ON_DEMAND pool in us-central1 has 8"),
            std::string::npos)
      << v->message;
}

TEST(SchedulerTest, SpotUsesSpotPoolsAndPreemptibleQuota) {
  Fleet fleet = TestFleet();
  fleet.quotas.defaults["PREEMPTIBLE_NVIDIA_H100_MEGA_80GB"] = 16;  // two nodes
  Scheduler s(fleet);
  s.UpsertPending(Job(1, {.replicas = 2, .strategy = SchedulingStrategy::kSpot}));
  s.UpsertPending(
      Job(2, {.replicas = 1, .strategy = SchedulingStrategy::kSpot, .created = kT0 + 1s}));
  CycleResult r = s.RunCycle(kT0);
  ASSERT_NE(Admitted(r, 1), nullptr);
  EXPECT_EQ(Admitted(r, 1)->placement.pools[0].pool, kSpotA);
  ExpectVerdict(r, 2, ReasonCode::kQuotaExceeded,
                "project quota for PREEMPTIBLE_NVIDIA_H100_MEGA_80GB exceeded: 16/16 in use, job "
                "needs 8");
  // The job ends; the quota comes back.
  s.Remove(1);
  EXPECT_NE(Admitted(s.RunCycle(kT0 + 1min), 2), nullptr);
}

TEST(SchedulerTest, QuotaBeyondTheLimitNeverFits) {
  Fleet fleet = TestFleet();
  fleet.quotas.defaults["NVIDIA_H100_MEGA_80GB"] = 16;
  Scheduler s(fleet);
  s.UpsertPending(Job(1, {.replicas = 4}));
  ExpectVerdict(s.RunCycle(kT0), 1, ReasonCode::kNeverFits,
                "needs 32 NVIDIA_H100_MEGA_80GB, quota is 16 (parked until configuration changes)");
}

TEST(SchedulerTest, HigherPriorityPreemptsTheFewestLowerPriorityJobs) {
  Fleet fleet = TestFleet();
  Scheduler s(fleet);
  // Zone b runs high-priority work; zone a's reservation and on-demand pool run low-priority work.
  s.UpsertPending(Job(4, {.replicas = 8, .priority = "high"}));
  s.UpsertPending(Job(1, {.replicas = 4, .priority = "low", .created = kT0 + 1s}));
  s.UpsertPending(Job(2, {.replicas = 1, .priority = "low", .created = kT0 + 2s}));
  s.UpsertPending(Job(3, {.replicas = 1, .priority = "low", .created = kT0 + 3s}));
  CycleResult first = s.RunCycle(kT0);
  ASSERT_EQ(first.admissions.size(), 4u);

  s.UpsertPending(Job(10, {.replicas = 2, .priority = "high", .created = kT0 + 1min}));
  // The newest low-priority jobs go first, and only as many as the gang needs: the two one-node
  // jobs free zone a's on-demand pool; the 4-node reservation job keeps running. They are told
  // and run out their 30 s termination grace (a pod's default) while job 10 waits.
  CycleResult r = s.RunCycle(kT0 + 2min);
  EXPECT_TRUE(r.admissions.empty());
  ExpectVerdict(r, 10, ReasonCode::kPreempting,
                "preempting jobs 3, 2 (lower priority): admitted when their 30s termination "
                "grace ends at 2027-01-15 08:02:30 UTC");
  ASSERT_EQ(r.notices.size(), 2u);
  EXPECT_EQ(r.notices[0].code, "PREEMPTION_NOTICE");
  EXPECT_EQ(r.notices[0].message,
            "preempted by higher-priority job 10: stops at the end of its 30s termination grace, "
            "2027-01-15 08:02:30 UTC, and goes back to the queue");
  EXPECT_EQ(s.NextPreemptionDue(), kT0 + 2min + 30s);
  EXPECT_TRUE(s.RunCycle(kT0 + 2min + 29s).admissions.empty()) << "still in the grace";

  r = s.RunCycle(kT0 + 2min + 30s);
  const AdmissionDecision* a = Admitted(r, 10);
  ASSERT_NE(a, nullptr);
  std::vector<int64_t> victims = a->victims;
  std::sort(victims.begin(), victims.end());
  EXPECT_EQ(victims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a->notice_at, kT0 + 2min);
  EXPECT_NE(a->message.find("after preempting 2 lower-priority jobs"), std::string::npos);
  EXPECT_EQ(a->VictimMessage(2),
            "preempted by higher-priority job 10, stopped at the end of its termination grace; "
            "back in the queue");
  EXPECT_FALSE(s.NextPreemptionDue());
}

// Victims told to stop are no one else's: a second high-priority job that arrives during the
// grace takes other victims (or waits), never the same ones; a preemptor cancelled during the
// grace leaves its victims running.
TEST(SchedulerTest, VictimsInTheirGraceAreTakenOnceAndACancelledPreemptorStopsNone) {
  Fleet fleet = EightNodeFleet();
  Scheduler s(fleet);
  for (int64_t id = 1; id <= 4; ++id) {
    s.UpsertPending(Job(id, {.replicas = 2, .priority = "low", .created = kT0 + 1s * id}));
  }
  ASSERT_EQ(s.RunCycle(kT0).admissions.size(), 4u);
  s.UpsertPending(Job(10, {.replicas = 2, .priority = "high", .created = kT0 + 1min}));
  CycleResult r = s.RunCycle(kT0 + 1min);
  ASSERT_EQ(VerdictOf(r, 10)->code, ReasonCode::kPreempting);
  s.UpsertPending(Job(11, {.replicas = 2, .priority = "high", .created = kT0 + 1min + 10s}));
  r = s.RunCycle(kT0 + 1min + 10s);
  ASSERT_EQ(VerdictOf(r, 11)->code, ReasonCode::kPreempting);
  EXPECT_NE(VerdictOf(r, 11)->message, "") << VerdictOf(r, 11)->message;

  ASSERT_EQ(r.notices.size(), 1u);
  const int64_t spared = r.notices[0].job_id;
  s.Remove(11);  // cancelled in its grace
  r = s.RunCycle(kT0 + 1min + 30s);
  ASSERT_EQ(r.notices.size(), 1u) << "the spared victim is told it runs on";
  EXPECT_EQ(r.notices[0].job_id, spared);
  EXPECT_EQ(r.notices[0].code, "ADMITTED");
  ASSERT_NE(Admitted(r, 10), nullptr);
  ASSERT_EQ(Admitted(r, 10)->victims.size(), 1u);
  r = s.RunCycle(kT0 + 1min + 40s);
  EXPECT_TRUE(r.admissions.empty()) << "job 11's victim was never stopped";
  EXPECT_EQ(s.running_count(), 4u) << "three low-priority jobs and job 10";
  EXPECT_FALSE(s.NextPreemptionDue());
}

// A victim whose emergency save fits in the grace loses nothing, so it is the one taken, and it
// keeps its progress up to the notice.
TEST(SchedulerTest, AVictimThatSavesInItsGraceIsTakenFirstAndKeepsItsProgress) {
  Fleet fleet = EightNodeFleet();
  Scheduler s(fleet);
  std::vector<RunningJob> running;
  for (int64_t id = 1; id <= 4; ++id) {
    SchedulerJob job = Job(id, {.replicas = 2, .priority = "low", .created = kT0 + 1s * id});
    job.checkpoint_interval = 30min;
    if (id == 2) job.emergency_checkpoint = 20s;
    Placement placement;
    placement.zone = "us-central1-b";
    placement.pools.push_back({0, 2, "a3-megagpu-8g", 0});
    s.UpsertRunning(MakeRunningJob(job, placement, fleet, kT0, kT0));
  }
  s.UpsertPending(Job(10, {.replicas = 2, .priority = "high", .created = kT0 + 20min}));
  CycleResult r = PastGrace(s, fleet, kT0 + 20min);
  const AdmissionDecision* a = Admitted(r, 10);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->victims, std::vector<int64_t>{2}) << "the others would lose 20 minutes";
  EXPECT_EQ(a->SavedAt(2), kT0 + 20min);
  EXPECT_NE(a->VictimMessage(2).find("its emergency checkpoint kept its progress up to the "
                                     "notice"),
            std::string::npos);

  // A save longer than the grace is no save.
  Fleet short_grace = EightNodeFleet();
  short_grace.termination_grace = 10s;
  Scheduler t(short_grace);
  SchedulerJob job = Job(1, {.replicas = 8, .priority = "low"});
  job.emergency_checkpoint = 20s;
  Placement placement;
  placement.zone = "us-central1-b";
  placement.pools.push_back({0, 8, "a3-megagpu-8g", 0});
  t.UpsertRunning(MakeRunningJob(job, placement, short_grace, kT0, kT0));
  t.UpsertPending(Job(10, {.replicas = 2, .priority = "high", .created = kT0 + 20min}));
  r = PastGrace(t, short_grace, kT0 + 20min);
  ASSERT_NE(Admitted(r, 10), nullptr);
  EXPECT_FALSE(Admitted(r, 10)->SavedAt(1));
}

// With no grace (terminationGracePeriod "0s") the victims stop in the admission's own commit.
TEST(SchedulerTest, WithoutAGraceAPreemptionAdmitsAtOnce) {
  Fleet fleet = EightNodeFleet();
  fleet.termination_grace = Duration{};
  Scheduler s(fleet);
  s.UpsertPending(Job(1, {.replicas = 8, .priority = "low"}));
  ASSERT_EQ(s.RunCycle(kT0).admissions.size(), 1u);
  s.UpsertPending(Job(10, {.replicas = 2, .priority = "high", .created = kT0 + 1min}));
  CycleResult r = s.RunCycle(kT0 + 1min);
  ASSERT_NE(Admitted(r, 10), nullptr);
  EXPECT_EQ(Admitted(r, 10)->victims, std::vector<int64_t>{1});
  EXPECT_FALSE(Admitted(r, 10)->notice_at);
}

// Beyond the lookback a job is not looked at; when the queue's head outranks it, that is its
// reason (Slurm's "Priority"), else it is only not evaluated yet.
TEST(SchedulerTest, AJobBehindTheLookbackWaitsBehindHigherPriority) {
  Fleet fleet = EightNodeFleet();
  Scheduler s(fleet, SchedulerConfig{.lookback = 1});
  s.UpsertPending(Job(1, {.replicas = 8}));
  ASSERT_EQ(s.RunCycle(kT0).admissions.size(), 1u);
  s.UpsertPending(Job(2, {.replicas = 4, .priority = "high", .created = kT0 + 1s}));
  s.UpsertPending(Job(3, {.replicas = 1, .created = kT0 + 2s}));
  s.UpsertPending(Job(4, {.replicas = 1, .priority = "high", .created = kT0 + 3s}));
  CycleResult r = s.RunCycle(kT0 + 1min);
  ASSERT_EQ(VerdictOf(r, 2)->code, ReasonCode::kPreempting);
  ExpectVerdict(r, 3, ReasonCode::kBehindHigherPriority,
                "not evaluated yet: higher-priority jobs wait ahead of it in its queue (the first "
                "is job 2, priority 1000); position 3, lookback 1 per cycle");
  ExpectVerdict(r, 4, ReasonCode::kNotEvaluated,
                "not evaluated yet (position 2, lookback 1 per cycle)");
}

TEST(SchedulerTest, EqualPriorityNeverPreempts) {
  Fleet fleet = TestFleet();
  Scheduler s(fleet);
  s.UpsertPending(Job(1, {.replicas = 8}));
  s.UpsertPending(Job(2, {.replicas = 4, .created = kT0 + 1s}));
  s.UpsertPending(Job(3, {.replicas = 2, .created = kT0 + 2s}));
  s.RunCycle(kT0);
  s.UpsertPending(Job(4, {.replicas = 1, .created = kT0 + 3s}));
  CycleResult r = s.RunCycle(kT0 + 1min);
  EXPECT_EQ(Admitted(r, 4), nullptr);
  EXPECT_EQ(VerdictOf(r, 4)->code, ReasonCode::kNoCapacity);
}

TEST(SchedulerTest, FlexStartWaitsForAllNodesAtOnce) {
  Fleet fleet = TestFleet();
  Scheduler s(fleet);
  s.UpsertPending(Job(1, {.replicas = 4, .strategy = SchedulingStrategy::kFlexStart}));
  EXPECT_EQ(s.NextDwsGrant(kT0), kT0 + 90min) << "30 min + 4 × 15 min";
  CycleResult r = s.RunCycle(kT0 + 80min);
  EXPECT_EQ(Admitted(r, 1), nullptr);
  const Verdict* v = VerdictOf(r, 1);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->code, ReasonCode::kWaitingForDws);
  EXPECT_NE(v->message.find("max wait 24h, 1h20m elapsed; the DWS queue grants it in 10m"),
            std::string::npos)
      << v->message;
  ASSERT_NE(Admitted(s.RunCycle(kT0 + 90min), 1), nullptr);
  EXPECT_EQ(s.NextDwsGrant(kT0 + 90min), std::nullopt) << "no request waits";
}

// A request behind others is told the nodes asked ahead of it, moves up when they are granted,
// and maxWaitDuration ends one whose grant comes too late.
TEST(SchedulerTest, AFlexStartRequestBehindOthersWaitsForThemAndMaxWaitEndsIt) {
  Fleet fleet = TestFleet();
  Scheduler s(fleet);
  s.UpsertPending(Job(1, {.replicas = 2, .strategy = SchedulingStrategy::kFlexStart}));
  s.UpsertPending(
      Job(2, {.replicas = 2, .strategy = SchedulingStrategy::kFlexStart, .created = kT0 + 1s}));
  s.UpsertPending(Job(3, {.replicas = 2,
                          .strategy = SchedulingStrategy::kFlexStart,
                          .max_wait = 30min,
                          .created = kT0 + 2s}));
  // Alone, 2 nodes are granted after 60 min; job 2 has 2 nodes ahead, job 3 has 4.
  EXPECT_EQ(s.NextDwsGrant(kT0), kT0 + 60min);
  CycleResult r = s.RunCycle(kT0 + 30min);
  EXPECT_TRUE(r.admissions.empty());
  EXPECT_NE(VerdictOf(r, 2)->message.find("2 nodes of this fleet ahead of it"), std::string::npos)
      << VerdictOf(r, 2)->message;
  EXPECT_NE(VerdictOf(r, 3)->message.find("4 nodes of this fleet ahead of it"), std::string::npos)
      << VerdictOf(r, 3)->message;
  r = s.RunCycle(kT0 + 30min + 2s);
  ASSERT_EQ(r.failures.size(), 1u) << "job 3's grant (2 h) is past its max wait";
  EXPECT_EQ(r.failures[0].job_id, 3);
  EXPECT_NE(r.failures[0].message.find("maxWaitDuration (30m)"), std::string::npos)
      << r.failures[0].message;
  r = s.RunCycle(kT0 + 60min + 1s);
  EXPECT_NE(Admitted(r, 1), nullptr);
  EXPECT_NE(Admitted(r, 2), nullptr) << "first in the queue once job 1 is granted";
}

TEST(SchedulerTest, FlexStartFailsAfterMaxWaitDuration) {
  Fleet fleet = TestFleet();
  Scheduler s(fleet);
  s.UpsertPending(
      Job(1, {.replicas = 16, .strategy = SchedulingStrategy::kFlexStart, .max_wait = 30min}));
  EXPECT_TRUE(s.RunCycle(kT0 + 29min).failures.empty());
  CycleResult r = s.RunCycle(kT0 + 30min);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_NE(r.failures[0].message.find("maxWaitDuration (30m)"), std::string::npos);
  EXPECT_EQ(s.pending_count(), 0u);
}

// A flex-start job requeued after it ran (a failed node, say) makes a new request: its wait and
// its maxWaitDuration count from the requeue, not from its creation two days before.
TEST(SchedulerTest, ARequeuedFlexStartJobWaitsAnewFromItsRequeue) {
  Fleet fleet = TestFleet();
  Scheduler s(fleet);
  const Timestamp requeued = kT0 + 48h;
  s.UpsertPending(Job(1, {.replicas = 2,
                          .strategy = SchedulingStrategy::kFlexStart,
                          .max_wait = 90min,
                          .queued_since = requeued}));
  EXPECT_EQ(s.NextDwsGrant(requeued), requeued + 60min) << "30 min + 2 × 15 min, from the requeue";
  CycleResult r = s.RunCycle(requeued + 1min);
  EXPECT_TRUE(r.failures.empty()) << "its max wait runs from the requeue";
  EXPECT_EQ(Admitted(r, 1), nullptr) << "not granted at once";
  ASSERT_NE(VerdictOf(r, 1), nullptr);
  EXPECT_NE(VerdictOf(r, 1)->message.find("max wait 1h30m, 1m elapsed"), std::string::npos)
      << VerdictOf(r, 1)->message;
  EXPECT_NE(Admitted(s.RunCycle(requeued + 60min), 1), nullptr);
}

// A job that ran and was requeued keeps its place by its create time (Kueue's
// requeuingStrategy.timestamp: Creation); with Eviction it queues behind the jobs that queued
// before its requeue.
TEST(SchedulerTest, ARequeuedJobIsOrderedByCreationUnlessEvictionIsAsked) {
  Fleet fleet = EightNodeFleet();
  const Timestamp requeued = kT0 + 2h;
  auto first_admitted = [&](SchedulerConfig config) -> int64_t {
    Scheduler s(fleet, config);
    s.UpsertPending(Job(1, {.replicas = 8, .queued_since = requeued}));  // created first
    s.UpsertPending(Job(2, {.replicas = 8, .created = kT0 + 1h}));
    CycleResult r = s.RunCycle(requeued);
    if (r.admissions.size() != 1) return -static_cast<int64_t>(r.admissions.size());
    return r.admissions[0].job_id;
  };
  EXPECT_EQ(first_admitted({}), 1) << "by default its create time keeps it ahead";
  EXPECT_EQ(first_admitted({.requeue_timestamp = RequeueTimestamp::kEviction}), 2)
      << "with Eviction it waits behind the job queued before its requeue";
}

TEST(SchedulerTest, MaxWaitZeroWaitsForever) {
  Fleet fleet = TestFleet();
  Scheduler s(fleet);
  s.UpsertPending(
      Job(1, {.replicas = 16, .strategy = SchedulingStrategy::kFlexStart, .max_wait = 0s}));
  EXPECT_TRUE(s.RunCycle(kT0 + 24h * 30).failures.empty());
}

TEST(SchedulerTest, TpuJobTakesAWholeSliceOfItsShape) {
  Fleet fleet = TestFleet();
  Scheduler s(fleet);
  s.UpsertPending(Job(1, {.machine = "ct5p-hightpu-4t", .tpu_topology = "4x4x4"}));
  s.UpsertPending(
      Job(2, {.machine = "ct5p-hightpu-4t", .tpu_topology = "2x2x1", .created = kT0 + 1s}));
  CycleResult r = s.RunCycle(kT0);
  ASSERT_NE(Admitted(r, 1), nullptr);
  EXPECT_EQ(Admitted(r, 1)->placement.pools[0].pool, kTpuB);
  EXPECT_EQ(s.FreeUnits(kTpuB, kT0), 1);
  EXPECT_EQ(VerdictOf(r, 2)->code, ReasonCode::kNeverFits);  // no 2x2x1 slices in the fleet
}

TEST(SchedulerTest, BigGangHoldsCapacitySoSmallLongJobsCannotStarveIt) {
  Fleet fleet = TestFleet();
  Scheduler s(fleet);
  // Zone b: a running 6-node job ending in 1h leaves 2 nodes free.
  s.UpsertPending(Job(1, {.replicas = 6, .expected_runtime = "3600s"}));
  CycleResult first = s.RunCycle(kT0);
  ASSERT_EQ(Admitted(first, 1)->placement.zone, "us-central1-b");
  // A high-priority 8-node gang of another project cannot fit anywhere now (nor preempt another
  // project's work): it reserves zone b at +1h.
  s.UpsertPending(
      Job(2, {.project = "big", .replicas = 8, .priority = "high", .created = kT0 + 1s}));
  // A small long job may not take zone b's free nodes (it would push the gang back)…
  s.UpsertPending(Job(3, {.project = "other", .replicas = 2, .created = kT0 + 2s}));
  CycleResult r = s.RunCycle(kT0 + 1min);
  EXPECT_EQ(Admitted(r, 2), nullptr);
  EXPECT_NE(VerdictOf(r, 2)->message.find("capacity reserved in us-central1-b"), std::string::npos)
      << VerdictOf(r, 2)->message;
  // …but zone a still has room for it, so it runs there.
  ASSERT_NE(Admitted(r, 3), nullptr);
  EXPECT_EQ(Admitted(r, 3)->placement.zone, "us-central1-a");
}

// A waiting job's verdict is told again only when a value its text shows changes (its text is
// built then, not at every evaluation): the free nodes of the closest zone, then a hold of its
// own once it has waited reserve_min_wait.
TEST(SchedulerTest, AWaitingJobIsToldAgainOnlyWhenWhatItsVerdictShowsChanges) {
  Fleet fleet = EightNodeFleet();
  Scheduler s(fleet);
  s.UpsertPending(Job(1, {.replicas = 6, .expected_runtime = "3600s"}));
  s.RunCycle(kT0);
  s.UpsertPending(Job(2, {.project = "big", .replicas = 8, .created = kT0 + 1s}));
  const std::string no_capacity =
      "no free capacity for 8 a3-megagpu-8g RESERVATION or ON_DEMAND in any zone of us-central1 "
      "(closest: us-central1-b, ";
  ExpectVerdict(s.RunCycle(kT0 + 1min), 2, ReasonCode::kNoCapacity, no_capacity + "2 of 8)");
  EXPECT_EQ(VerdictOf(s.RunCycle(kT0 + 2min), 2), nullptr) << "nothing it shows changed";
  s.UpsertPending(Job(3, {.replicas = 1, .expected_runtime = "600s", .created = kT0 + 3min}));
  ASSERT_NE(Admitted(s.RunCycle(kT0 + 3min), 3), nullptr);
  ExpectVerdict(s.RunCycle(kT0 + 4min), 2, ReasonCode::kNoCapacity, no_capacity + "1 of 8)");
  EXPECT_EQ(VerdictOf(s.RunCycle(kT0 + 5min), 2), nullptr);
  // Waiting 30 minutes, it holds zone b from the 6-node job's end (+1h).
  ExpectVerdict(s.RunCycle(kT0 + 31min), 2, ReasonCode::kNoCapacity,
                no_capacity + "1 of 8); capacity reserved in us-central1-b, expected start " +
                    ClockText(kT0 + 1h));
  EXPECT_EQ(VerdictOf(s.RunCycle(kT0 + 32min), 2), nullptr);
}

// On the eight-node fleet: 6 nodes run for an hour, and a high-priority 8-node gang of another
// project (job 2) will hold capacity for its start at +1h.
void GangWaitsForTheHour(Scheduler& s) {
  s.UpsertPending(Job(1, {.replicas = 6, .expected_runtime = "3600s"}));
  s.RunCycle(kT0);
  s.UpsertPending(
      Job(2, {.project = "big", .replicas = 8, .priority = "high", .created = kT0 + 1s}));
}

TEST(SchedulerTest, HeldCapacityGoesOnlyToJobsThatEndBeforeTheGangStarts) {
  Fleet fleet = EightNodeFleet();
  Scheduler s(fleet);
  GangWaitsForTheHour(s);
  s.UpsertPending(Job(3, {.replicas = 2, .created = kT0 + 2s}));
  s.UpsertPending(Job(4, {.replicas = 2, .expected_runtime = "1800s", .created = kT0 + 3s}));
  CycleResult r = s.RunCycle(kT0 + 1min);
  EXPECT_EQ(Admitted(r, 3), nullptr);
  EXPECT_EQ(VerdictOf(r, 3)->code, ReasonCode::kHeldForReservation);
  EXPECT_NE(VerdictOf(r, 3)->message.find("capacity held for job 2 (priority 1000)"),
            std::string::npos);
  ASSERT_NE(Admitted(r, 4), nullptr);  // backfilled: it ends before the gang's start
}

// Jobs of one shape that may hold capacity each book their own hold, at the time backfill finds
// for the shape (other holds do not move it), whether or not an admission came between them
// (Scheduler::ReserveCapacity shares the search only while no capacity moved).
TEST(SchedulerTest, JobsOfOneShapeEachBookAHoldAtTheShapesStart) {
  Fleet fleet = EightNodeFleet();
  Scheduler s(fleet);
  GangWaitsForTheHour(s);  // job 2: all 8 nodes once job 1's 6 end, at +1h
  // Between jobs 2 and 3 in rank order: ends before their start, so it passes the holds.
  s.UpsertPending(Job(4, {.project = "other",
                          .replicas = 2,
                          .priority = "high",
                          .expected_runtime = "1800s",
                          .created = kT0 + 2s}));
  s.UpsertPending(
      Job(3, {.project = "big", .replicas = 8, .priority = "high", .created = kT0 + 3s}));
  s.UpsertPending(
      Job(5, {.project = "big", .replicas = 8, .priority = "high", .created = kT0 + 4s}));
  CycleResult r = s.RunCycle(kT0 + 1min);
  ASSERT_NE(Admitted(r, 4), nullptr);
  const std::string reserved =
      "capacity reserved in us-central1-b, expected start " + ClockText(kT0 + 1h);
  for (int64_t id : {2, 3, 5}) {
    ASSERT_NE(VerdictOf(r, id), nullptr) << id;
    EXPECT_NE(VerdictOf(r, id)->message.find(reserved), std::string::npos)
        << id << ": " << VerdictOf(r, id)->message;
  }
}

// A deep queue of one shape: after the first cycles, its jobs are skipped as holding their
// shape's verdict (told_shared); each such claim is true.
TEST(SchedulerTest, JobsSkippedAsHoldingTheirShapesVerdictDoHoldIt) {
  Fleet fleet = EightNodeFleet();
  Scheduler s(fleet);
  s.UpsertPending(Job(1, {.replicas = 8, .timeout = std::chrono::hours(240)}));
  ASSERT_EQ(s.RunCycle(kT0).admissions.size(), 1u);
  for (int64_t id = 2; id <= 60; ++id) {
    s.UpsertPending(Job(id, {.replicas = 2, .created = kT0 + std::chrono::seconds(id)}));
  }
  for (int cycle = 1; cycle <= 3; ++cycle) {
    CycleResult r = s.RunCycle(kT0 + cycle * 1s);
    EXPECT_GT(r.reused, 50) << cycle;
    EXPECT_EQ(s.JobsWithStaleSharedVerdict(), std::vector<int64_t>{}) << cycle;
  }
}

// Without the expected-runtime label a job is taken to run for its timeout (Slurm's rule: a job's
// time limit is what backfill plans with), so an ordinary job with a short timeout backfills and
// one with Vertex's default of 7 days does not.
TEST(SchedulerTest, BackfillWithoutTheLabelPlansWithTheJobsTimeout) {
  Fleet fleet = EightNodeFleet();
  Scheduler s(fleet);
  GangWaitsForTheHour(s);
  s.UpsertPending(Job(3, {.replicas = 2, .created = kT0 + 2s}));
  s.UpsertPending(Job(4, {.replicas = 2, .timeout = 30min, .created = kT0 + 3s}));
  CycleResult r = s.RunCycle(kT0 + 1min);
  EXPECT_EQ(Admitted(r, 3), nullptr) << "7 days would push the gang back";
  ASSERT_NE(Admitted(r, 4), nullptr) << "its 30-minute timeout ends before the gang's start";
}

// Backfill books a gang at the first time the jobs still running free enough for it: a job that
// ended early has freed its nodes already, and its expected end no longer counts as a release.
TEST(SchedulerTest, AHoldCountsOnlyTheReleasesOfJobsStillRunning) {
  Fleet fleet = EightNodeFleet();
  Scheduler s(fleet);
  s.UpsertPending(Job(1, {.replicas = 4, .expected_runtime = "3600s"}));
  s.UpsertPending(Job(2, {.replicas = 2, .expected_runtime = "7200s", .created = kT0 + 1s}));
  s.UpsertPending(Job(3, {.replicas = 2, .expected_runtime = "10800s", .created = kT0 + 2s}));
  ASSERT_EQ(s.RunCycle(kT0).admissions.size(), 3u);
  s.Remove(2);  // ended early: 2 nodes free now; job 1 ends at +1h, job 3 at +3h
  s.UpsertPending(
      Job(4, {.project = "big", .replicas = 8, .priority = "high", .created = kT0 + 3s}));
  CycleResult r = s.RunCycle(kT0 + 10min);
  EXPECT_EQ(Admitted(r, 4), nullptr);
  // 2 free + 4 at +1h is 6; all 8 only at +3h (job 2's old end, +2h, would have said 8 then).
  EXPECT_NE(VerdictOf(r, 4)->message.find("capacity reserved in us-central1-b, expected start " +
                                          ClockText(kT0 + 3h)),
            std::string::npos)
      << VerdictOf(r, 4)->message;
}

// A job that may hold capacity is evaluated on its own while the cycle can still make holds;
// once it has made all it may, such jobs of one shape share one verdict like any others.
TEST(SchedulerTest, JobsThatMayHoldShareTheirShapesVerdictOnceTheCycleHasMadeItsHolds) {
  Fleet fleet = EightNodeFleet();
  SchedulerConfig config;
  config.max_reservations = 1;
  Scheduler s(fleet, config);
  s.UpsertPending(Job(1, {.replicas = 8, .expected_runtime = "3600s"}));
  ASSERT_EQ(s.RunCycle(kT0).admissions.size(), 1u);
  for (int64_t id = 2; id <= 4; ++id) {
    s.UpsertPending(Job(id, {.project = "big",
                             .replicas = 8,
                             .priority = "high",
                             .created = kT0 + std::chrono::seconds(id)}));
  }
  CycleResult r = s.RunCycle(kT0 + 1min);
  EXPECT_NE(VerdictOf(r, 2)->message.find("capacity reserved"), std::string::npos);
  EXPECT_EQ(VerdictOf(r, 3)->message.find("capacity reserved"), std::string::npos);
  EXPECT_EQ(VerdictOf(r, 4)->code, VerdictOf(r, 3)->code);
  EXPECT_EQ(VerdictOf(r, 4)->message, VerdictOf(r, 3)->message);
  EXPECT_EQ(r.evaluations, 2);  // jobs 2 and 3; job 4 took job 3's verdict
  EXPECT_EQ(r.reused, 1);
}

// A job that may hold capacity but books none (nothing frees enough within the backfill horizon)
// changes nothing: the next job of its shape, fitted on the same state, takes its verdict. Any
// admission between them is a new state, on which the next one is fitted alone again.
TEST(SchedulerTest, JobsThatMayHoldShareAVerdictOnlyWhileNothingChanged) {
  Fleet fleet = EightNodeFleet();
  Scheduler s(fleet);
  // 7 of the 8 nodes for 10 days, beyond the 8-day horizon: no hold can be booked on them.
  s.UpsertPending(Job(1, {.replicas = 7, .timeout = std::chrono::hours(240)}));
  ASSERT_EQ(s.RunCycle(kT0).admissions.size(), 1u);
  auto big = [](int64_t id, int64_t replicas) {
    return Job(id, {.project = "big",
                    .replicas = replicas,
                    .priority = "high",
                    .created = kT0 + std::chrono::seconds(id)});
  };
  s.UpsertPending(big(2, 8));
  s.UpsertPending(big(3, 1));  // takes the free node after job 2 was fitted
  s.UpsertPending(big(4, 8));
  s.UpsertPending(big(5, 8));
  CycleResult r = s.RunCycle(kT0 + 1min);
  ASSERT_NE(Admitted(r, 3), nullptr);
  const std::string no_capacity =
      "no free capacity for 8 a3-megagpu-8g RESERVATION or ON_DEMAND in any zone of us-central1 "
      "(closest: us-central1-b, ";
  ExpectVerdict(r, 2, ReasonCode::kNoCapacity, no_capacity + "1 of 8)");
  ExpectVerdict(r, 4, ReasonCode::kNoCapacity, no_capacity + "0 of 8)");
  ExpectVerdict(r, 5, ReasonCode::kNoCapacity, no_capacity + "0 of 8)");
  EXPECT_EQ(r.evaluations, 4);  // each still costs an evaluation of the budget
  EXPECT_EQ(r.shared_fits, 1) << "job 5 took job 4's verdict; job 4 was fitted after job 3 ran";
  EXPECT_EQ(r.reused, 0);
}

// Demo may hold one A3 Mega node (8 GPUs) and no other project any.
Fleet OneNodeOfQuotaFleet() {
  Fleet fleet = TestFleet();
  fleet.quotas.defaults["NVIDIA_H100_MEGA_80GB"] = 0;
  fleet.quotas.per_project["demo"]["NVIDIA_H100_MEGA_80GB"] = 8;
  return fleet;
}

// Jobs 1 and 2 of one node each, in age order, then job 3 of high priority, which goes first.
void QueueTwoThenAHighPriorityJob(Scheduler& s) {
  s.UpsertPending(Job(1, {.replicas = 1}));
  s.UpsertPending(Job(2, {.replicas = 1, .created = kT0 + 1s}));
  s.UpsertPending(Job(3, {.replicas = 1, .priority = "high", .created = kT0 + 2s}));
}

// The loop reports positions on a period: a cycle without them still says why the jobs it looked
// at wait, with no position yet, and the queues that moved are walked at the next cycle with them.
TEST(SchedulerTest, PositionsWaitForACycleThatReportsThem) {
  Fleet fleet = OneNodeOfQuotaFleet();
  Scheduler s(fleet);
  QueueTwoThenAHighPriorityJob(s);
  CycleResult quiet = s.RunCycle(kT0, /*report_positions=*/false);
  ASSERT_NE(Admitted(quiet, 3), nullptr);
  ASSERT_NE(VerdictOf(quiet, 1), nullptr);
  EXPECT_EQ(VerdictOf(quiet, 1)->code, ReasonCode::kQuotaExceeded);
  EXPECT_EQ(VerdictOf(quiet, 1)->position, 0) << "no position reported yet";

  CycleResult walked = s.RunCycle(kT0 + 1s);
  ASSERT_NE(VerdictOf(walked, 1), nullptr);
  EXPECT_EQ(VerdictOf(walked, 1)->position, 1);
  ASSERT_NE(VerdictOf(walked, 2), nullptr);
  EXPECT_EQ(VerdictOf(walked, 2)->position, 2);

  s.Remove(1);  // job 2 moves up, but only a cycle that reports positions says so
  EXPECT_EQ(VerdictOf(s.RunCycle(kT0 + 2s, false), 2), nullptr);
  CycleResult moved = s.RunCycle(kT0 + 3s);
  ASSERT_NE(VerdictOf(moved, 2), nullptr);
  EXPECT_EQ(VerdictOf(moved, 2)->position, 1);
  EXPECT_TRUE(s.RunCycle(kT0 + 4s).verdicts.empty()) << "reported once";
}

TEST(SchedulerTest, PositionsFollowPriorityThenAge) {
  Fleet fleet = OneNodeOfQuotaFleet();
  Scheduler s(fleet);
  QueueTwoThenAHighPriorityJob(s);
  CycleResult r = s.RunCycle(kT0);
  ASSERT_NE(Admitted(r, 3), nullptr);  // high first; then the quota (one node) is used up
  EXPECT_EQ(VerdictOf(r, 1)->position, 1);
  EXPECT_EQ(VerdictOf(r, 1)->code, ReasonCode::kQuotaExceeded);
  EXPECT_EQ(VerdictOf(r, 2)->position, 2);
  // Unchanged verdicts are not reported again.
  EXPECT_TRUE(s.RunCycle(kT0 + 1s).verdicts.empty());
}

// The head-of-line case of issue 17: 1,100 jobs that can never fit (no n1 pool in this fleet)
// ahead of one that fits at once, in the same queue.
TEST(SchedulerTest, JobsThatCanNeverFitAreParkedAndTheJobsBehindThemRunInTheSameCycle) {
  Fleet fleet = TestFleet();
  Scheduler s(fleet);
  for (int64_t id = 1; id <= 1100; ++id) {
    s.UpsertPending(Job(id, {.machine = "n1-standard-4", .created = kT0 + 1ms * id}));
  }
  s.UpsertPending(Job(5000, {.created = kT0 + 1h}));
  CycleResult first = s.RunCycle(kT0 + 1h);
  ASSERT_NE(Admitted(first, 5000), nullptr) << "not held back by the lookback of 1,000";
  const Verdict* last = VerdictOf(first, 1100);
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->code, ReasonCode::kNeverFits);
  EXPECT_EQ(last->position, 1100) << "a parked job keeps its true place";
  EXPECT_NE(last->message.find("parked until configuration changes"), std::string::npos);

  CycleResult second = s.RunCycle(kT0 + 1h + 1s);
  EXPECT_EQ(second.evaluations + second.reused, 0) << "parked jobs cost nothing per cycle";
  EXPECT_TRUE(second.verdicts.empty());

  // A job that fits, behind them all, is admitted at once in a later cycle too.
  s.UpsertPending(Job(5001, {.created = kT0 + 2h}));
  CycleResult third = s.RunCycle(kT0 + 2h);
  EXPECT_NE(Admitted(third, 5001), nullptr);
  EXPECT_EQ(third.evaluations + third.reused, 1);
}

// Thousands park in one cycle: the active entries are copied together (CompactActive), and every
// job, active or parked, is still where it was: admitted in rank order, reported at its place,
// removable, and back in the active order when its quota frees.
TEST(SchedulerTest, JobsKeepTheirPlacesWhenTheActiveOnesAreCompactedAfterManyPark) {
  Fleet fleet = TestFleet();
  fleet.quotas.per_project["capped"]["NVIDIA_H100_MEGA_80GB"] = 8;  // one node
  Scheduler s(fleet);
  s.UpsertPending(Job(7001, {.project = "capped"}));
  s.UpsertPending(Job(7002, {.project = "capped", .created = kT0 + 1ms}));
  // Ids 1..6000; every 300th is an A3 job that fits (20 of them), the rest can never fit.
  for (int64_t id = 1; id <= 6000; ++id) {
    JobOptions o{.created = kT0 + 1ms * id};
    if (id % 300 != 0) o.machine = "n1-standard-4";
    s.UpsertPending(Job(id, o));
  }
  CycleResult first = s.RunCycle(kT0 + 10s);
  // Capped takes an on-demand node, demo the other 13 it may use (4 reserved + 9).
  EXPECT_EQ(first.admissions.size(), 14u);
  EXPECT_NE(Admitted(first, 7001), nullptr);
  for (int64_t id = 300; id <= 13 * 300; id += 300) EXPECT_NE(Admitted(first, id), nullptr) << id;
  EXPECT_EQ(VerdictOf(first, 7002)->code, ReasonCode::kQuotaExceeded);
  EXPECT_EQ(VerdictOf(first, 5999)->position, DisplayPosition(5999 - 13));
  EXPECT_EQ(VerdictOf(first, 50)->position, 50);
  // 7 demo jobs are active now, beside 5,981 parked.
  EXPECT_LT(s.active_entry_slots(), 1000u) << "the active entries were not compacted";

  CycleResult idle = s.RunCycle(kT0 + 11s);
  EXPECT_EQ(idle.evaluations, 1) << "one shape for the 7 that wait for capacity";
  EXPECT_TRUE(idle.admissions.empty());

  // A demo node frees: the best-ranked waiting job takes it.
  s.Remove(300);
  CycleResult freed = s.RunCycle(kT0 + 12s);
  ASSERT_EQ(freed.admissions.size(), 1u);
  EXPECT_EQ(freed.admissions[0].job_id, 14 * 300);
  // A parked job and an active one leave; the parked jobs behind them move up.
  s.Remove(1);
  s.Remove(15 * 300);
  CycleResult left = s.RunCycle(kT0 + 13s);
  ASSERT_NE(VerdictOf(left, 2), nullptr);
  EXPECT_EQ(VerdictOf(left, 2)->position, 1);
  ASSERT_NE(VerdictOf(left, 50), nullptr);
  EXPECT_EQ(VerdictOf(left, 50)->code, ReasonCode::kNeverFits);
  EXPECT_EQ(VerdictOf(left, 50)->position, 49);

  // Capped's running job ends: its parked job is active again and admitted.
  s.Remove(7001);
  EXPECT_NE(Admitted(s.RunCycle(kT0 + 14s), 7002), nullptr);
  EXPECT_EQ(s.pending_count(), 6002u - 16 - 2);
}

TEST(SchedulerTest, AJobThatCanNeverFitFailsAfterTheFleetsNeverFitsTimeout) {
  Fleet fleet = TestFleet();
  fleet.never_fits_timeout = 1h;
  Scheduler s(fleet);
  s.UpsertPending(Job(1, {.replicas = 9}));  // no pool has 9 nodes
  EXPECT_TRUE(s.RunCycle(kT0).failures.empty());
  EXPECT_TRUE(s.RunCycle(kT0 + 59min).failures.empty());
  CycleResult r = s.RunCycle(kT0 + 1h);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].job_id, 1);
  EXPECT_EQ(r.failures[0].message,
            "NEVER_FITS: needs 9 a3-megagpu-8g in one zone; the largest RESERVATION or ON_DEMAND "
            "pool in us-central1 has 8; the fleet did not change within its neverFitsTimeout (1h), "
            "so the job fails");
  EXPECT_EQ(s.pending_count(), 0u);
}

TEST(SchedulerTest, ANeverFitsTimeoutOfZeroWaitsForAFleetChangeForever) {
  Fleet fleet = TestFleet();
  fleet.never_fits_timeout = Duration{};
  Scheduler s(fleet);
  s.UpsertPending(Job(1, {.replicas = 9}));
  s.RunCycle(kT0);
  EXPECT_TRUE(s.RunCycle(kT0 + 24h * 30).failures.empty());
  EXPECT_EQ(s.pending_count(), 1u);
}

TEST(SchedulerTest, TheNeverFitsWaitCountsFromTheSchedulersFirstCycleAtLeast) {
  Fleet fleet = TestFleet();
  Scheduler s(fleet);
  s.UpsertPending(Job(1, {.replicas = 9, .created = kT0 - 5h}));  // queued under another leader
  EXPECT_TRUE(s.RunCycle(kT0).failures.empty()) << "this fleet has not had its hour yet";
  EXPECT_EQ(s.RunCycle(kT0 + 1h).failures.size(), 1u);
}

TEST(SchedulerTest, AJobOverItsQuotaWaitsParkedUntilItsProjectFreesSome) {
  Fleet fleet = TestFleet();
  fleet.quotas.defaults["NVIDIA_H100_MEGA_80GB"] = 8;  // one node
  Scheduler s(fleet);
  s.UpsertPending(Job(1));
  s.UpsertPending(Job(2, {.created = kT0 + 1s}));
  s.UpsertPending(Job(3, {.project = "other", .created = kT0 + 2s}));
  CycleResult r = s.RunCycle(kT0);
  ASSERT_NE(Admitted(r, 1), nullptr);
  EXPECT_EQ(VerdictOf(r, 2)->code, ReasonCode::kQuotaExceeded);
  CycleResult idle = s.RunCycle(kT0 + 1min);
  EXPECT_EQ(idle.evaluations + idle.reused, 0) << "nothing changed for it: not looked at";
  s.Remove(3);  // another project's job ends: no quota of demo's comes back
  EXPECT_EQ(s.RunCycle(kT0 + 2min).evaluations, 0);
  s.Remove(1);  // demo's own job ends
  EXPECT_NE(Admitted(s.RunCycle(kT0 + 3min), 2), nullptr);
}

TEST(SchedulerTest, AVerdictThatChangesAtTheSamePositionIsReported) {
  Fleet fleet = TestFleet();
  fleet.quotas.defaults["PREEMPTIBLE_NVIDIA_H100_MEGA_80GB"] = 8;  // one spot node a project
  fleet.quotas.per_project["other"]["PREEMPTIBLE_NVIDIA_H100_MEGA_80GB"] = 32;
  Scheduler s(fleet);
  const SchedulingStrategy spot = SchedulingStrategy::kSpot;
  s.UpsertPending(Job(1, {.strategy = spot}));                                     // demo: 1
  s.UpsertPending(Job(2, {.project = "other", .replicas = 3, .strategy = spot}));  // 3 of 4
  s.UpsertPending(Job(3, {.strategy = spot, .created = kT0 + 1s}));                // quota
  CycleResult r = s.RunCycle(kT0);
  ASSERT_NE(Admitted(r, 1), nullptr);
  ASSERT_NE(Admitted(r, 2), nullptr);
  ASSERT_EQ(VerdictOf(r, 3)->code, ReasonCode::kQuotaExceeded);
  EXPECT_EQ(VerdictOf(r, 3)->position, 1);
  // Demo's job ends, and a higher-priority job of another project takes its spot node first.
  s.Remove(1);
  s.UpsertPending(Job(4, {.project = "other", .strategy = spot, .priority = "high"}));
  r = s.RunCycle(kT0 + 1min);
  ASSERT_NE(Admitted(r, 4), nullptr);
  const Verdict* v = VerdictOf(r, 3);
  ASSERT_NE(v, nullptr) << "QUOTA_EXCEEDED → NO_CAPACITY must reach the API";
  EXPECT_EQ(v->code, ReasonCode::kNoCapacity);
  EXPECT_EQ(v->position, 1);
}

CapacityPool ElasticCpu(std::string zone, CM model) {
  CapacityPool p = Pool(zone, "", model, 0);
  p.elastic = true;
  p.id = zone + "/elastic-cpu/" + std::string(ConsumptionModelName(model));
  return p;
}

TEST(SchedulerTest, CpuJobsRunOnElasticCapacityBoundedByTheCpuQuota) {
  Fleet fleet = TestFleet();
  fleet.pools.push_back(ElasticCpu("us-central1-a", CM::kOnDemand));
  fleet.pools.push_back(ElasticCpu("us-central1-a", CM::kSpot));
  fleet.quotas.defaults["CPUS"] = 400;  // 100 n1-standard-4
  Scheduler s(fleet);
  s.UpsertPending(Job(1, {.machine = "n1-standard-4", .replicas = 60}));
  s.UpsertPending(Job(2, {.machine = "n1-standard-4", .replicas = 40, .created = kT0 + 1s}));
  s.UpsertPending(Job(3, {.machine = "n1-standard-4", .created = kT0 + 2s}));
  s.UpsertPending(Job(4, {.machine = "e2-standard-8", .strategy = SchedulingStrategy::kSpot}));
  s.UpsertPending(Job(5, {.replicas = 20, .created = kT0 + 3s}));  // A3 Mega: still scarce
  CycleResult r = s.RunCycle(kT0);
  ASSERT_NE(Admitted(r, 1), nullptr) << "60 nodes: no node count bounds it";
  const PlacedPool& placed = Admitted(r, 1)->placement.pools[0];
  EXPECT_TRUE(fleet.pools[placed.pool].elastic);
  EXPECT_EQ(placed.units, 60);
  EXPECT_EQ(placed.machine_type, "n1-standard-4");
  ASSERT_NE(Admitted(r, 2), nullptr);
  EXPECT_EQ(VerdictOf(r, 3)->code, ReasonCode::kQuotaExceeded) << "400 of 400 CPUs in use";
  ASSERT_NE(Admitted(r, 4), nullptr);
  EXPECT_EQ(fleet.pools[Admitted(r, 4)->placement.pools[0].pool].model, CM::kSpot);
  EXPECT_EQ(VerdictOf(r, 5)->code, ReasonCode::kNeverFits) << "GPUs are not elastic";
}

TEST(SchedulerTest, N1WithAttachedGpusRunsOnlyOnAPoolOfThatGpu) {
  Fleet fleet = TestFleet();
  fleet.pools.push_back(ElasticCpu("us-central1-a", CM::kOnDemand));
  CapacityPool t4 = Pool("us-central1-a", "n1+NVIDIA_TESLA_T4", CM::kOnDemand, 2);
  t4.attached = AcceleratorType::kNvidiaTeslaT4;
  fleet.pools.push_back(t4);
  Scheduler s(fleet);
  // Same machine type, three shapes: a V100 (no pool: never fits) evaluated first must not make
  // the CPU-only and the T4 jobs wait with its verdict.
  s.UpsertPending(
      Job(1, {.machine = "n1-standard-8", .attached = AcceleratorType::kNvidiaTeslaV100}));
  s.UpsertPending(Job(2, {.machine = "n1-standard-8", .created = kT0 + 1s}));
  s.UpsertPending(Job(3, {.machine = "n1-standard-16",
                          .created = kT0 + 2s,
                          .attached = AcceleratorType::kNvidiaTeslaT4}));
  CycleResult r = s.RunCycle(kT0 + 1min);
  EXPECT_EQ(VerdictOf(r, 1)->code, ReasonCode::kNeverFits);
  ASSERT_NE(Admitted(r, 2), nullptr);
  EXPECT_TRUE(fleet.pools[Admitted(r, 2)->placement.pools[0].pool].elastic) << "CPU only: elastic";
  ASSERT_NE(Admitted(r, 3), nullptr);
  const PlacedPool& placed = Admitted(r, 3)->placement.pools[0];
  EXPECT_EQ(fleet.pools[placed.pool].attached, AcceleratorType::kNvidiaTeslaT4);
  EXPECT_EQ(placed.machine_type, "n1-standard-16");
  EXPECT_EQ(placed.attached_gpus, 1);
}

// cloud-tpu is sized by its cores: 8 is one v2-8/v3-8 host, on a pool of that generation only;
// a pod slice needs a pool of pod slices.
TEST(SchedulerTest, CloudTpuRunsOnHostsOfItsGenerationOnly) {
  Fleet f;
  f.epoch = kT0;
  CapacityPool v2 = Pool("us-central1-a", "cloud-tpu+TPU_V2", CM::kOnDemand, 1);
  v2.attached = AcceleratorType::kTpuV2;
  v2.tpu_chips = 4;
  f.pools.push_back(v2);
  Scheduler s(f);
  auto cloud_tpu = [](int64_t id, AcceleratorType type, int32_t cores) {
    return Job(id, {.machine = "cloud-tpu", .attached = type, .accelerator_count = cores});
  };
  s.UpsertPending(cloud_tpu(1, AcceleratorType::kTpuV3, 8));
  s.UpsertPending(cloud_tpu(2, AcceleratorType::kTpuV2, 32));
  s.UpsertPending(cloud_tpu(3, AcceleratorType::kTpuV2, 8));
  CycleResult r = s.RunCycle(kT0);
  ASSERT_NE(Admitted(r, 3), nullptr);
  EXPECT_EQ(Admitted(r, 3)->placement.pools[0].pool, 0);
  EXPECT_EQ(VerdictOf(r, 1)->code, ReasonCode::kNeverFits) << "no TPU_V3 host anywhere";
  EXPECT_EQ(VerdictOf(r, 2)->code, ReasonCode::kNeverFits) << "no v2-32 pod slice anywhere";
}

TEST(SchedulerTest, AnExplicitPoolBoundsItsMachineTypeInItsZone) {
  Fleet fleet = TestFleet();
  fleet.pools.push_back(Pool("us-central1-a", "n2-standard-8", CM::kOnDemand, 1));
  fleet.pools.push_back(ElasticCpu("us-central1-a", CM::kOnDemand));
  Scheduler s(fleet);
  s.UpsertPending(Job(1, {.machine = "n2-standard-8", .replicas = 2}));
  CycleResult r = s.RunCycle(kT0);
  EXPECT_EQ(Admitted(r, 1), nullptr);
  EXPECT_EQ(VerdictOf(r, 1)->code, ReasonCode::kNeverFits) << VerdictOf(r, 1)->message;

  Fleet wider = fleet;
  wider.pools.push_back(ElasticCpu("us-central1-b", CM::kOnDemand));
  Scheduler t(wider);
  t.UpsertPending(Job(1, {.machine = "n2-standard-8", .replicas = 2}));
  r = t.RunCycle(kT0);
  ASSERT_NE(Admitted(r, 1), nullptr) << "zone b has no n2 pool of its own: elastic there";
  EXPECT_EQ(Admitted(r, 1)->placement.zone, "us-central1-b");
}

// One reservation of 8 A3 Mega nodes owned by cohort "research": team-a and team-b have a nominal
// share of 4 each.
Fleet CohortFleet(CohortMember a, CohortMember b, int units = 8) {
  Fleet f;
  f.epoch = kT0;
  CapacityPool pool = Pool("us-central1-a", "a3-megagpu-8g", CM::kReservation, units, "r-shared");
  pool.cohort = 0;
  f.pools.push_back(pool);
  Cohort cohort;
  cohort.name = "research";
  cohort.pools = {pool.id};
  cohort.capacity["a3-megagpu-8g/RESERVATION"] = units;
  cohort.members = {std::move(a), std::move(b)};
  f.cohorts.push_back(std::move(cohort));
  return f;
}

CohortMember Member(std::string project, int64_t nominal) {
  CohortMember m;
  m.project = std::move(project);
  m.nominal["a3-megagpu-8g/RESERVATION"] = nominal;
  return m;
}

int64_t AdmittedCount(const CycleResult& r) { return static_cast<int64_t>(r.admissions.size()); }

// Jobs first..last of `project`, created a second apart from kT0 + first seconds.
std::vector<SchedulerJob> JobsOf(const std::string& project, int64_t first, int64_t last) {
  std::vector<SchedulerJob> jobs;
  for (int64_t id = first; id <= last; ++id) {
    jobs.push_back(Job(id, {.project = project, .created = kT0 + 1s * id}));
  }
  return jobs;
}

// Queues `jobs`, runs a cycle at `at`, and reports those it admitted RUNNING from `running` (their
// nodes up), as the scheduler loop does once the runtime has started them.
CycleResult AdmitAndStart(Scheduler& s, const Fleet& fleet, const std::vector<SchedulerJob>& jobs,
                          Timestamp at, std::optional<Timestamp> running = std::nullopt) {
  for (const SchedulerJob& job : jobs) s.UpsertPending(job);
  CycleResult r = s.RunCycle(at);
  for (const SchedulerJob& job : jobs) {
    if (const AdmissionDecision* a = Admitted(r, job.id)) {
      s.UpsertRunning(MakeRunningJob(job, a->placement, fleet, at, running.value_or(at)));
    }
  }
  return r;
}

TEST(SchedulerTest, AMemberBorrowsIdleShareAndTheOwnerReclaimsItByPreemption) {
  Fleet fleet = CohortFleet(Member("team-a", 4), Member("team-b", 4));
  Scheduler s(fleet);
  CycleResult r = AdmitAndStart(s, fleet, JobsOf("team-a", 1, 8), kT0 + 10s);
  EXPECT_EQ(AdmittedCount(r), 8) << "team-b is idle: team-a borrows its 4";
  s.UpsertPending(Job(20, {.project = "team-b", .created = kT0 + 5min}));
  s.UpsertPending(Job(21, {.project = "team-b", .created = kT0 + 5min + 1s}));
  r = s.RunCycle(kT0 + 5min);
  EXPECT_EQ(AdmittedCount(r), 0) << "borrowed work that ran less than 10 minutes is exempt";
  EXPECT_NE(VerdictOf(r, 20)->message.find("under fair share"), std::string::npos)
      << VerdictOf(r, 20)->message;

  r = PastGrace(s, fleet, kT0 + 10min + 10s);
  ASSERT_NE(Admitted(r, 20), nullptr) << "the owner takes its share back";
  ASSERT_NE(Admitted(r, 21), nullptr);
  std::vector<int64_t> victims = Admitted(r, 20)->victims;
  victims.insert(victims.end(), Admitted(r, 21)->victims.begin(), Admitted(r, 21)->victims.end());
  std::sort(victims.begin(), victims.end());
  EXPECT_EQ(victims, (std::vector<int64_t>{7, 8})) << "the borrower's newest work goes first";
  EXPECT_EQ(Admitted(r, 20)->reclaimed, Admitted(r, 20)->victims) << "named as reclaimed";
  EXPECT_EQ(Admitted(r, 20)->CauseOf(Admitted(r, 20)->victims[0]), PreemptionCause::kReclaim);
  EXPECT_NE(Admitted(r, 20)->message.find("after reclaiming borrowed capacity from 1 job"),
            std::string::npos)
      << Admitted(r, 20)->message;

  // Beyond its nominal the owner may not reclaim: team-a keeps its own 4.
  for (int64_t id = 22; id <= 25; ++id) {
    s.UpsertPending(Job(id, {.project = "team-b", .created = kT0 + 11min + 1s * id}));
  }
  r = PastGrace(s, fleet, kT0 + 11min);
  EXPECT_EQ(AdmittedCount(r), 2) << "team-b reaches its nominal 4";
  r = s.RunCycle(kT0 + 30min);
  EXPECT_EQ(AdmittedCount(r), 0) << "team-a is at its nominal: nothing more to reclaim";
}

// The exemption counts from RUNNING: work admitted at 10 s whose nodes took 6 minutes to boot and
// pull has run 4 minutes at 10 min 10 s, and is not reclaimed until it has run 10.
TEST(SchedulerTest, TheReclaimExemptionCountsFromRunningNotFromAdmission) {
  Fleet fleet = CohortFleet(Member("team-a", 4), Member("team-b", 4));
  Scheduler s(fleet);
  AdmitAndStart(s, fleet, JobsOf("team-a", 1, 8), kT0 + 10s, kT0 + 6min + 10s);
  s.UpsertPending(Job(20, {.project = "team-b", .created = kT0 + 5min}));
  CycleResult r = s.RunCycle(kT0 + 10min + 10s);
  EXPECT_EQ(Admitted(r, 20), nullptr) << "4 minutes of running is not 10";
  r = PastGrace(s, fleet, kT0 + 16min + 10s);
  ASSERT_NE(Admitted(r, 20), nullptr) << "10 minutes of running: the owner takes its share back";
  EXPECT_EQ(Admitted(r, 20)->victims.size(), 1u);
}

// Victims lose the least work: the one whose last checkpoint is newest goes first, before a
// lower-priority one that would lose more, and whatever the order they were admitted in.
TEST(SchedulerTest, APreemptionTakesTheVictimThatLosesTheLeastWork) {
  Fleet fleet = EightNodeFleet();
  Scheduler s(fleet);
  // Four 2-node jobs: checkpoints every 30 minutes, except job 4 (every 10). At +50 min jobs 1-3
  // have run 20 minutes since their last checkpoint, job 4 nothing.
  std::vector<SchedulerJob> jobs;
  for (int64_t id = 1; id <= 4; ++id) {
    SchedulerJob job =
        Job(id, {.replicas = 2, .priority = id == 1 ? "low" : "medium", .created = kT0 + 1s * id});
    job.checkpoint_interval = id == 4 ? 10min : 30min;
    jobs.push_back(std::move(job));
  }
  ASSERT_EQ(AdmittedCount(AdmitAndStart(s, fleet, jobs, kT0, kT0)), 4);
  s.UpsertPending(Job(9, {.replicas = 2, .priority = "high", .created = kT0 + 40min}));
  CycleResult r = PastGrace(s, fleet, kT0 + 50min);
  ASSERT_NE(Admitted(r, 9), nullptr);
  EXPECT_EQ(Admitted(r, 9)->victims, std::vector<int64_t>{4})
      << "job 4 loses nothing; job 1 (lower priority) would lose 20 minutes";
}

// Two members with no nominal share and equal weights: one took the whole cohort while the other
// was idle. When the other comes, fair sharing preempts the first's work down to half each, once
// that work has run the 10-minute exemption, and no further.
TEST(SchedulerTest, FairSharingPreemptsAMemberOverItsShareDownToIt) {
  Fleet fleet = CohortFleet(Member("team-a", 0), Member("team-b", 0));
  Scheduler s(fleet);
  EXPECT_EQ(AdmittedCount(AdmitAndStart(s, fleet, JobsOf("team-a", 1, 8), kT0 + 10s)), 8);
  for (int64_t id = 11; id <= 18; ++id) {
    s.UpsertPending(Job(id, {.project = "team-b", .created = kT0 + 1min + 1s * id}));
  }
  CycleResult r = s.RunCycle(kT0 + 2min);
  EXPECT_EQ(AdmittedCount(r), 0);
  ExpectVerdict(r, 11, ReasonCode::kNoCapacity,
                "no free capacity for 1 a3-megagpu-8g RESERVATION or ON_DEMAND in any zone of "
                "us-central1 (closest: us-central1-a, 0 of 1); cohort research's "
                "a3-megagpu-8g/RESERVATION is full: 8 of 8 in use, team-b holds 0 of its nominal "
                "0; under fair share: team-b's weighted share after admission would be 0.125, "
                "team-a's is 1; its work that ran less than 10m is not preempted");

  // Shares count the preemptions as done from the notice: the members behind do not take more
  // victims for the same share during the grace.
  r = PastGrace(s, fleet, kT0 + 11min);
  ASSERT_EQ(AdmittedCount(r), 4) << "half each";
  std::vector<int64_t> victims;
  for (const AdmissionDecision& a : r.admissions) {
    EXPECT_EQ(a.fair_shared, a.victims);
    EXPECT_TRUE(a.reclaimed.empty()) << "beyond a nominal of 0 nothing is reclaimed";
    EXPECT_NE(a.message.find("after preempting 1 job over their project's fair share"),
              std::string::npos)
        << a.message;
    victims.insert(victims.end(), a.victims.begin(), a.victims.end());
  }
  std::sort(victims.begin(), victims.end());
  EXPECT_EQ(victims, (std::vector<int64_t>{5, 6, 7, 8}));
  ExpectVerdict(r, 15, ReasonCode::kNoCapacity,
                "no free capacity for 1 a3-megagpu-8g RESERVATION or ON_DEMAND in any zone of "
                "us-central1 (closest: us-central1-a, 0 of 1); cohort research's "
                "a3-megagpu-8g/RESERVATION is full: 8 of 8 in use, team-b holds 4 of its nominal "
                "0; over fair share: team-b's weighted share after admission would be 0.625, "
                "team-a's is 0.5");

  // At half each neither takes from the other, however long their work has run.
  EXPECT_EQ(AdmittedCount(s.RunCycle(kT0 + 2h)), 0);
}

// With weights 1:3 the heavier member may hold three quarters before fair sharing stops.
TEST(SchedulerTest, FairSharingPreemptionFollowsTheWeights) {
  CohortMember b = Member("team-b", 0);
  b.weight = 3;
  Fleet fleet = CohortFleet(Member("team-a", 0), b);
  Scheduler s(fleet);
  EXPECT_EQ(AdmittedCount(AdmitAndStart(s, fleet, JobsOf("team-a", 1, 8), kT0 + 10s)), 8);
  for (int64_t id = 11; id <= 18; ++id) {
    s.UpsertPending(Job(id, {.project = "team-b", .created = kT0 + 1min + 1s * id}));
  }
  EXPECT_EQ(AdmittedCount(PastGrace(s, fleet, kT0 + 11min)), 6) << "8 × 3/4";
  EXPECT_EQ(AdmittedCount(s.RunCycle(kT0 + 2h)), 0);
}

TEST(SchedulerTest, ABorrowingLimitCapsWhatAMemberTakesAndSaysSo) {
  CohortMember b = Member("team-b", 4);
  b.borrowing_limit["a3-megagpu-8g/RESERVATION"] = 2;
  Fleet fleet = CohortFleet(Member("team-a", 4), b);
  Scheduler s(fleet);
  for (int64_t id = 1; id <= 8; ++id) {
    s.UpsertPending(Job(id, {.project = "team-b", .created = kT0 + 1s * id}));
  }
  CycleResult r = s.RunCycle(kT0 + 10s);
  EXPECT_EQ(AdmittedCount(r), 6) << "nominal 4 + borrowing limit 2";
  ExpectVerdict(r, 7, ReasonCode::kShareExhausted,
                "share of cohort research exhausted for team-b: a3-megagpu-8g/RESERVATION 6 in "
                "use, nominal 4, borrowing limit 2; may take 0 more now, job needs 1");
}

TEST(SchedulerTest, ALendingLimitKeepsTheRestOfTheOwnersNominalForIt) {
  CohortMember a = Member("team-a", 4);
  a.lending_limit["a3-megagpu-8g/RESERVATION"] = 1;
  Fleet fleet = CohortFleet(a, Member("team-b", 4));
  Scheduler s(fleet);
  for (int64_t id = 1; id <= 8; ++id) {
    s.UpsertPending(Job(id, {.project = "team-b", .created = kT0 + 1s * id}));
  }
  CycleResult r = s.RunCycle(kT0 + 10s);
  EXPECT_EQ(AdmittedCount(r), 5) << "its own 4 and the 1 team-a lends";
  EXPECT_EQ(VerdictOf(r, 6)->code, ReasonCode::kShareExhausted);
  s.UpsertPending(Job(30, {.project = "team-a", .replicas = 3, .created = kT0 + 1min}));
  r = s.RunCycle(kT0 + 1min);
  ASSERT_NE(Admitted(r, 30), nullptr) << "what team-a did not lend is there at once";
  EXPECT_TRUE(Admitted(r, 30)->victims.empty());
}

// A cohort of a 4-node reservation and a 4-node calendar-mode reservation usable from 1h to 3h,
// nominal 4 each: shares are of what the cohort has now. Before the window each member's nominal
// is 2, so team-b takes back the 2 that team-a borrows; inside it each has its 4.
TEST(SchedulerTest, CohortSharesAreOfTheCapacityThereIsNowCalendarWindowsIncluded) {
  Fleet fleet = CohortFleet(Member("team-a", 4), Member("team-b", 4), 4);
  CapacityPool calendar = Pool("us-central1-a", "a3-megagpu-8g", CM::kReservation, 4, "r-calendar");
  calendar.term = "calendar";
  calendar.window_start = kT0 + 1h;
  calendar.window_end = kT0 + 3h;
  calendar.cohort = 0;
  fleet.pools.push_back(calendar);
  fleet.cohorts[0].pools.push_back(calendar.id);
  fleet.cohorts[0].capacity["a3-megagpu-8g/RESERVATION"] = 8;
  Scheduler s(fleet);
  EXPECT_EQ(AdmittedCount(AdmitAndStart(s, fleet, JobsOf("team-a", 1, 4), kT0 + 10s)), 4)
      << "team-b is idle: team-a borrows its 2";
  s.UpsertPending(Job(11, {.project = "team-b", .created = kT0 + 20min}));
  s.UpsertPending(Job(12, {.project = "team-b", .created = kT0 + 20min + 1s}));
  s.UpsertPending(Job(13, {.project = "team-b", .created = kT0 + 20min + 2s}));
  CycleResult r = PastGrace(s, fleet, kT0 + 20min);
  ASSERT_EQ(AdmittedCount(r), 2) << "team-b's nominal before the window is 2 of its 4";
  for (const AdmissionDecision& a : r.admissions) EXPECT_EQ(a.reclaimed, a.victims);
  EXPECT_NE(VerdictOf(r, 13)->message.find("team-b holds 2 of its nominal 2"), std::string::npos)
      << VerdictOf(r, 13)->message;

  r = s.RunCycle(kT0 + 1h);
  EXPECT_NE(Admitted(r, 13), nullptr) << "the window is open: team-b's nominal is 4";
  EXPECT_TRUE(Admitted(r, 13)->victims.empty());
}

TEST(SchedulerTest, NonMembersCannotUseACohortsPool) {
  Fleet fleet = CohortFleet(Member("team-a", 4), Member("team-b", 4));
  Scheduler s(fleet);
  s.UpsertPending(Job(1, {.project = "outsider"}));
  EXPECT_EQ(VerdictOf(s.RunCycle(kT0), 1)->code, ReasonCode::kNeverFits);
}

// Three projects with weights 1:2:1 and no nominal share flood a 40-node cohort with 10-minute
// jobs for 20 hours: each one's share of the node-minutes converges to its weight.
TEST(SchedulerTest, FairSharingByWeightConvergesUnderAFlood) {
  Fleet f;
  f.epoch = kT0;
  CapacityPool pool = Pool("us-central1-a", "a3-megagpu-8g", CM::kReservation, 40, "r-shared");
  pool.cohort = 0;
  f.pools.push_back(pool);
  Cohort cohort;
  cohort.name = "lab";
  cohort.pools = {pool.id};
  cohort.capacity["a3-megagpu-8g/RESERVATION"] = 40;
  for (auto [project, weight] : {std::pair{"p1", 1.0}, {"p2", 2.0}, {"p3", 1.0}}) {
    CohortMember m;
    m.project = project;
    m.weight = weight;
    cohort.members.push_back(m);
  }
  f.cohorts.push_back(cohort);
  Scheduler s(f);
  int64_t next_id = 1;
  std::map<int64_t, std::string> project_of;
  std::map<std::string, int> waiting;
  auto top_up = [&](Timestamp now) {  // every project always has 200 jobs waiting
    for (const char* project : {"p1", "p2", "p3"}) {
      for (; waiting[project] < 200; ++waiting[project]) {
        project_of[next_id] = project;
        s.UpsertPending(Job(next_id++, {.project = project, .created = now}));
      }
    }
  };
  std::map<int64_t, Timestamp> ends;  // running job → its end
  std::map<std::string, double> node_minutes;
  Timestamp now = kT0;
  for (int minute = 0; minute < 20 * 60; ++minute, now += 1min) {
    for (auto it = ends.begin(); it != ends.end();) {
      if (it->second > now) {
        ++it;
        continue;
      }
      s.Remove(it->first);
      it = ends.erase(it);
    }
    top_up(now);
    for (const AdmissionDecision& a : s.RunCycle(now).admissions) {
      ASSERT_TRUE(a.victims.empty()) << "no nominal shares: nothing to reclaim";
      ends[a.job_id] = now + 10min;
      --waiting[project_of[a.job_id]];
    }
    for (const auto& [id, end] : ends) node_minutes[project_of[id]] += 1;
  }
  const double total = node_minutes["p1"] + node_minutes["p2"] + node_minutes["p3"];
  EXPECT_GT(total, 0.95 * 40 * 20 * 60) << "the cohort's pool stays full";
  EXPECT_NEAR(node_minutes["p1"] / total, 0.25, 0.05);
  EXPECT_NEAR(node_minutes["p2"] / total, 0.50, 0.05);
  EXPECT_NEAR(node_minutes["p3"] / total, 0.25, 0.05);
}

TEST(SchedulerTest, DisplayPositionKeepsTwoSignificantDigitsPastAHundred) {
  EXPECT_EQ(DisplayPosition(7), 7);
  EXPECT_EQ(DisplayPosition(100), 100);
  EXPECT_EQ(DisplayPosition(4810), 4800);
  EXPECT_EQ(DisplayPosition(123456), 120000);
}

TEST(SchedulerTest, OlderVersionsNeverReplaceNewerOnes) {
  Fleet fleet = TestFleet();
  Scheduler s(fleet);
  SchedulerJob v2 = Job(1, {.replicas = 9});
  v2.version = 2;
  s.UpsertPending(v2);
  SchedulerJob v1 = Job(1, {.replicas = 1});
  s.UpsertPending(v1);
  EXPECT_EQ(VerdictOf(s.RunCycle(kT0), 1)->code, ReasonCode::kNeverFits);
}

TEST(SchedulerTest, PriorityLabelIsValidated) {
  EXPECT_EQ(*ParsePriorityLabel({{"trainyard-priority", "high"}}), 1000);
  EXPECT_EQ(*ParsePriorityLabel({{"trainyard-priority", "250"}}), 250);
  EXPECT_EQ(*ParsePriorityLabel({}), 500);
  auto bad = ParsePriorityLabel({{"trainyard-priority", "urgent"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("labels.trainyard-priority"), std::string::npos);
}

}  // namespace
}  // namespace trainyard

namespace trainyard {
namespace {

// A waiting DWS request's verdict counts its wait, so the clock decides at every cycle while one
// waits; a fleet that merely has DWS pools, with no request, waits for its other times.
TEST(SchedulerTest, OnlyAWaitingDwsRequestMakesEveryCycleTimeDriven) {
  Fleet fleet = TestFleet();
  Scheduler s(fleet);
  s.UpsertPending(Job(1, {.replicas = 16, .strategy = SchedulingStrategy::kOnDemand}));
  ASSERT_EQ(Admitted(s.RunCycle(kT0), 1), nullptr);
  EXPECT_NE(s.NextTimeDrivenDecision(kT0 + 1min), kT0 + 1min);
  s.UpsertPending(
      Job(2, {.replicas = 2, .strategy = SchedulingStrategy::kFlexStart, .created = kT0 + 1s}));
  s.RunCycle(kT0 + 1min);
  EXPECT_EQ(s.NextTimeDrivenDecision(kT0 + 2min), kT0 + 2min);
}

// skip_quiet_cycles: a cycle with nothing new since one that decided nothing returns at once,
// until NextTimeDrivenDecision (here: the waiting job reaches reserve_min_wait and holds) or a
// change of its inputs; every cycle's result is the one a scheduler that walks every time gives.
TEST(SchedulerTest, QuietCyclesReturnAtOnceUntilTheClockOrAChangeMayDecide) {
  Fleet fleet = EightNodeFleet();
  SchedulerConfig quiet_config;
  quiet_config.skip_quiet_cycles = true;
  Scheduler quiet(fleet, quiet_config);
  Scheduler every(fleet);
  auto both = [&](auto&& f) {
    f(quiet);
    f(every);
  };
  auto cycle = [&](Timestamp at) {
    CycleResult a = quiet.RunCycle(at);
    CycleResult b = every.RunCycle(at);
    EXPECT_EQ(a.admissions.size(), b.admissions.size());
    EXPECT_EQ(a.verdicts.size(), b.verdicts.size());
    for (size_t i = 0; i < a.verdicts.size() && i < b.verdicts.size(); ++i) {
      EXPECT_EQ(a.verdicts[i].verdict.message, b.verdicts[i].verdict.message);
    }
    return a;
  };
  both([](Scheduler& s) { s.UpsertPending(Job(1, {.replicas = 6, .expected_runtime = "3600s"})); });
  ASSERT_NE(Admitted(cycle(kT0), 1), nullptr);
  both([](Scheduler& s) { s.UpsertPending(Job(2, {.replicas = 4, .created = kT0 + 1s})); });
  EXPECT_EQ(VerdictOf(cycle(kT0 + 1min), 2)->code, ReasonCode::kNoCapacity);
  EXPECT_TRUE(cycle(kT0 + 2min).empty());  // decided nothing: quiet from here
  EXPECT_EQ(quiet.quiet_cycles(), 0);
  EXPECT_EQ(quiet.NextTimeDrivenDecision(kT0 + 2min), kT0 + 1s + 30min);
  EXPECT_TRUE(cycle(kT0 + 10min).empty());
  EXPECT_TRUE(cycle(kT0 + 30min).empty());
  EXPECT_EQ(quiet.quiet_cycles(), 2);
  // Job 2 has waited reserve_min_wait: it holds the nodes job 1 frees at +1h.
  const CycleResult held = cycle(kT0 + 31min);
  EXPECT_EQ(quiet.quiet_cycles(), 2);
  ASSERT_NE(VerdictOf(held, 2), nullptr);
  EXPECT_NE(VerdictOf(held, 2)->message.find("capacity reserved"), std::string::npos)
      << VerdictOf(held, 2)->message;
  EXPECT_TRUE(cycle(kT0 + 32min).empty());
  // A new job is looked at in the next cycle, quiet or not.
  both([](Scheduler& s) { s.UpsertPending(Job(3, {.replicas = 1, .created = kT0 + 33min})); });
  ASSERT_NE(Admitted(cycle(kT0 + 34min), 3), nullptr);
  EXPECT_EQ(quiet.quiet_cycles(), 2);
}

}  // namespace
}  // namespace trainyard
