// A pass's transitions in one statement (storage/job_transition_sql.h, TransitionsStatement):
// each job's compare-and-set holds on its own, and the values arrive as written, whatever they
// hold. And what a transition writes from the row it moves (services/jobs/job_record_update.h)
// is the same on PostgreSQL as on memory's ApplyToRecord, from the store's read or the caller's.
#include <gtest/gtest.h>

#include "services/jobs/job_record_update.h"
#include "services/jobs/job_state_machine.h"
#include "storage/row_codec.h"
#include "tests/integration/sim_fixture.h"

namespace trainyard {
namespace {

constexpr const char* kFleet = R"({
  "bootTime": {"default": "60s"}, "imagePullGbps": 10, "imageSizeGb": {"default": 10},
  "zones": [{"zone": "us-central1-a", "pools": [
    {"machineType": "a3-megagpu-8g", "model": "ON_DEMAND", "nodes": 2, "pricePerNodeHour": 90}]}]})";

class JobTransitionSqlTest : public testing::SimFixture {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(StartFleet(kFleet)); }

  static int64_t IdOf(const CustomJob& job) {
    return std::stoll(job.name.substr(job.name.rfind('/') + 1));
  }
  StateUpdate FailInQueue(const CustomJob& job, int64_t version, const std::string& message) {
    auto t = JobStateMachine::FailInQueue(JobSnapshot{IdOf(job), version, JobState::kQueued},
                                          clock_.Now(), message);
    EXPECT_TRUE(t.ok()) << t.status().message();
    return StateUpdate{IdOf(job), version, std::move(t).value(), std::nullopt, std::nullopt, {}};
  }
  CustomJob Get(const CustomJob& job) {
    auto got = service_->Get(JobRef{ParentRef{"demo", "us-central1"}, std::to_string(IdOf(job))});
    EXPECT_TRUE(got.ok()) << got.status().message();
    return got.ok() ? *got : CustomJob{};
  }
  int64_t Events(const CustomJob& job) {
    auto conn = pool_->Acquire();
    auto r = (*conn)->Exec("SELECT count(*) FROM job_events WHERE job_id = $1::bigint",
                           {std::to_string(IdOf(job))});
    return r.ok() ? r->GetInt64(0, 0) : -1;
  }
};

TEST_F(JobTransitionSqlTest, APassAppliesEachJobsTransitionOnItsOwnCompareAndSet) {
  CustomJob first = CreateGang("demo", SchedulingStrategy::kStandard, 1, "600s");
  CustomJob moved = CreateGang("demo", SchedulingStrategy::kStandard, 1, "600s");
  CustomJob last = CreateGang("demo", SchedulingStrategy::kStandard, 1, "600s");
  const int64_t events_before = Events(moved);
  // Quotes, a backslash, braces, commas and the word NULL: an array literal's every special.
  const std::string odd = R"(quota "a,b" {x} \ NULL, and more)";
  auto applied = store_->ApplyTransitions({FailInQueue(first, 1, "plain"),
                                           FailInQueue(moved, 7, "stale"),  // the job is at 1
                                           FailInQueue(last, 1, odd)});
  ASSERT_TRUE(applied.ok()) << applied.status().message();
  EXPECT_EQ(*applied, (std::vector<bool>{true, false, true}));

  CustomJob got = Get(first);
  EXPECT_EQ(got.state, JobState::kFailed);
  ASSERT_TRUE(got.error.has_value());
  EXPECT_EQ(got.error->message, "plain");
  EXPECT_EQ(Get(moved).state, JobState::kQueued);
  EXPECT_EQ(Events(moved), events_before) << "nothing recorded for a transition that did not apply";
  got = Get(last);
  EXPECT_EQ(got.state, JobState::kFailed);
  ASSERT_TRUE(got.error.has_value());
  EXPECT_EQ(got.error->message, odd);
  EXPECT_EQ(Events(last), events_before + 1);
}

// An admission that hands its job to a runtime leaves it that runtime's lease in the same write
// (StateUpdate::grant): due for it at once, not claimed by another, and the row written once.
TEST_F(JobTransitionSqlTest, AnAdmissionHandsItsJobToTheRuntimeItNames) {
  CustomJob handed = CreateGang("demo", SchedulingStrategy::kStandard, 0, "600s");
  CustomJob unhanded = CreateGang("demo", SchedulingStrategy::kStandard, 0, "600s");
  auto admit = [&](const CustomJob& job, std::optional<LeaseGrant> grant) {
    JobAdmission admission;
    admission.zone = "us-central1-a";
    auto t = JobStateMachine::Admit(JobSnapshot{IdOf(job), 1, JobState::kQueued}, clock_.Now(),
                                    admission, "admitted");
    EXPECT_TRUE(t.ok()) << t.status().message();
    return StateUpdate{IdOf(job), 1, std::move(t).value(), {}, {}, std::move(grant)};
  };
  auto applied = store_->ApplyTransitions(
      {admit(handed, LeaseGrant{"exec-a", std::chrono::seconds(30)}), admit(unhanded, {})});
  ASSERT_TRUE(applied.ok()) << applied.status().message();
  ASSERT_EQ(*applied, (std::vector<bool>{true, true}));

  auto claimed = store_->Claim("exec-b", 10, std::chrono::seconds(30));
  ASSERT_TRUE(claimed.ok()) << claimed.status().message();
  EXPECT_EQ(claimed->claimed, 1) << "only the job handed to nobody";
  const Timestamp later = clock_.Now() + std::chrono::hours(1);
  auto a = store_->Due("exec-a", later, 10);
  auto b = store_->Due("exec-b", later, 10);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->size(), 1u);
  EXPECT_EQ(a->front().id, IdOf(handed));
  ASSERT_EQ(b->size(), 1u);
  EXPECT_EQ(b->front().id, IdOf(unhanded));
  auto conn = pool_->Acquire();
  ASSERT_TRUE(conn.ok());
  auto lease = (*conn)->Exec(
      "SELECT lease_expires_at > now() AND lease_expires_at <= now() + interval '31 seconds' "
      "FROM custom_jobs WHERE id = $1::bigint",
      {std::to_string(IdOf(handed))});
  ASSERT_TRUE(lease.ok()) << lease.status().message();
  EXPECT_TRUE(lease->GetBool(0, 0)) << "the lease runs for the grant's 30 s from the write";
}

// Checkpoints every 600 s that take 45 s to save and 90 s to restore.
class JobTransitionSplitTest : public JobTransitionSqlTest {
 protected:
  void SetUp() override {
    checkpoint_interval_ = "600s";
    primary_env_ = {{"TRAINYARD_CHECKPOINT_SAVE_TIME", "45s"},
                    {"TRAINYARD_CHECKPOINT_RESTORE_TIME", "90s"}};
    ASSERT_NO_FATAL_FAILURE(StartFleet(kFleet));
  }
  JobRecord Read(const CustomJob& job) {
    const int64_t project = std::stoll(job.name.substr(9, job.name.find('/', 9) - 9));
    auto got = store_->Get(project, "us-central1", IdOf(job));
    EXPECT_TRUE(got.ok()) << got.status().message();
    return got.ok() ? *got : JobRecord{};
  }
  void RunUntilRunning(const CustomJob& job) {
    for (int i = 0; i < 40 && Get(job).state != JobState::kRunning; ++i) {
      ASSERT_NO_FATAL_FAILURE(Step());
      clock_.Advance(std::chrono::seconds(30));
    }
    ASSERT_EQ(Get(job).state, JobState::kRunning);
  }
  // Applies `update` on PostgreSQL and `ApplyToRecord` on `before` (the row it moves), and
  // expects the same row of both.
  void ExpectBothWriteAlike(const JobRecord& before, const StateUpdate& update) {
    JobRecord memory = before;
    ApplyToRecord(update.transition, memory);
    auto applied = store_->ApplyTransitions({update});
    ASSERT_TRUE(applied.ok()) << applied.status().message();
    ASSERT_EQ(*applied, std::vector<bool>{true});
    const JobRecord pg = Read(before.job);
    EXPECT_EQ(pg.version, memory.version);
    EXPECT_EQ(pg.job.state, memory.job.state);
    EXPECT_EQ(pg.cost_micros, memory.cost_micros);
    EXPECT_EQ(pg.state_since, memory.state_since);
    EXPECT_EQ(pg.checkpointed, memory.checkpointed);
    const JobGoodput& p = pg.job.trainyard->goodput;
    const JobGoodput& m = memory.job.trainyard->goodput;
    EXPECT_EQ(p.waiting, m.waiting);
    EXPECT_EQ(p.starting, m.starting);
    EXPECT_EQ(p.restarting, m.restarting);
    EXPECT_EQ(p.running, m.running);
    EXPECT_EQ(p.redone, m.redone);
    EXPECT_EQ(p.checkpoint_save, m.checkpoint_save);
    EXPECT_EQ(p.checkpoint_restore, m.checkpoint_restore);
    EXPECT_EQ(p.program_startup, m.program_startup);
  }
};

TEST_F(JobTransitionSplitTest, ARunInterruptedMidCheckpointSplitsAlikeInBothStores) {
  using std::chrono::seconds;
  CustomJob job = CreateGang("demo", SchedulingStrategy::kStandard, 0, "7200s");
  ASSERT_NO_FATAL_FAILURE(RunUntilRunning(job));
  // About 1000 s into its first run: one interval and its save kept, the time since redone.
  clock_.Advance(seconds(1000));
  JobRecord before = Read(job);
  auto reclaimed = JobStateMachine::Requeue(SnapshotOf(before.id, before.version, before.job),
                                            clock_.Now(), "reclaimed", /*spot_restart=*/true);
  ASSERT_TRUE(reclaimed.ok()) << reclaimed.status().message();
  // No basis: the store reads the row itself.
  ASSERT_NO_FATAL_FAILURE(ExpectBothWriteAlike(
      before, StateUpdate{before.id, before.version, *reclaimed, std::nullopt, std::nullopt, {}}));
  const JobRecord first = Read(job);
  EXPECT_EQ(first.checkpointed, seconds(600));
  EXPECT_EQ(first.job.trainyard->goodput.checkpoint_save, seconds(45));
  const JobGoodput& once = first.job.trainyard->goodput;
  EXPECT_EQ(once.redone, once.running - seconds(600 + 45));
  EXPECT_GT(once.redone, seconds(0));
  EXPECT_GT(first.cost_micros, 0);

  // It resumes from the checkpoint (a 90 s restore) and is reclaimed 1500 s in, mid-save, with
  // an emergency checkpoint 100 s before: the caller's read is the basis.
  ASSERT_NO_FATAL_FAILURE(RunUntilRunning(job));
  clock_.Advance(seconds(1500));
  before = Read(job);
  auto saved =
      JobStateMachine::Requeue(SnapshotOf(before.id, before.version, before.job), clock_.Now(),
                               "reclaimed", /*spot_restart=*/true, clock_.Now() - seconds(100));
  ASSERT_TRUE(saved.ok()) << saved.status().message();
  ASSERT_NO_FATAL_FAILURE(ExpectBothWriteAlike(
      before, StateUpdate{before.id, before.version, *saved, std::nullopt, BasisOf(before), {}}));
  const JobRecord second = Read(job);
  EXPECT_EQ(second.job.trainyard->goodput.checkpoint_restore, seconds(90));
  EXPECT_EQ(second.job.trainyard->goodput.redone, once.redone + seconds(100));
  EXPECT_GT(second.cost_micros, first.cost_micros);
}

// A run that started and ended between two looks is one write through RUNNING: the row as memory
// writes it (the saves of its run counted), two events in order, its nodes given back.
TEST_F(JobTransitionSplitTest, AStartAndItsEndInOneWriteRecordBothAndFreeTheNodes) {
  using std::chrono::seconds;
  CustomJob job = CreateGang("demo", SchedulingStrategy::kStandard, 0, "1300s");
  ASSERT_NO_FATAL_FAILURE(Step());
  JobRecord before = Read(job);
  ASSERT_EQ(before.job.state, JobState::kPending);
  const int64_t events_before = Events(job);
  const Timestamp started = clock_.Now() + seconds(120);
  const Timestamp ended = started + seconds(1400);
  auto start = JobStateMachine::Transition(SnapshotOf(before.id, before.version, before.job),
                                           JobState::kRunning, started, "all replicas are running");
  ASSERT_TRUE(start.ok()) << start.status().message();
  JobSnapshot running = SnapshotOf(before.id, before.version, before.job);
  running.state = JobState::kRunning;
  running.started = true;
  auto end = JobStateMachine::Transition(running, JobState::kSucceeded, ended, "exited 0");
  ASSERT_TRUE(end.ok()) << end.status().message();
  auto both = JobStateMachine::Through(*start, *end);
  ASSERT_TRUE(both.ok()) << both.status().message();
  clock_.Set(ended);
  ASSERT_NO_FATAL_FAILURE(ExpectBothWriteAlike(
      before, StateUpdate{before.id, before.version, *both, std::nullopt, BasisOf(before), {}}));

  const JobRecord after = Read(job);
  EXPECT_EQ(after.version, before.version + 1) << "one write";
  EXPECT_EQ(after.job.start_time, started);
  EXPECT_EQ(after.job.end_time, ended);
  EXPECT_GT(after.job.trainyard->goodput.checkpoint_save, seconds(0)) << "its run's saves";
  EXPECT_EQ(Events(job), events_before + 2);
  auto conn = pool_->Acquire();
  ASSERT_TRUE(conn.ok());
  auto events = (*conn)->Exec(
      "SELECT from_state, to_state, reason, " TY_MICROS("time") " FROM job_events "
      "WHERE job_id = $1::bigint ORDER BY time DESC, seq DESC LIMIT 2",
      {std::to_string(before.id)});
  ASSERT_TRUE(events.ok()) << events.status().message();
  ASSERT_EQ(events->rows(), 2);
  EXPECT_EQ(events->GetInt64(1, 0), static_cast<int64_t>(JobState::kPending));
  EXPECT_EQ(events->GetInt64(1, 1), static_cast<int64_t>(JobState::kRunning));
  EXPECT_EQ(events->Get(1, 2), "all replicas are running");
  EXPECT_EQ(events->GetInt64(1, 3), ToUnixMicros(started));
  EXPECT_EQ(events->GetInt64(0, 0), static_cast<int64_t>(JobState::kRunning));
  EXPECT_EQ(events->GetInt64(0, 1), static_cast<int64_t>(JobState::kSucceeded));
  EXPECT_EQ(events->GetInt64(0, 3), ToUnixMicros(ended));
  auto held = (*conn)->Exec("SELECT count(*) FROM nodes WHERE job_id = $1::bigint",
                            {std::to_string(before.id)});
  ASSERT_TRUE(held.ok()) << held.status().message();
  EXPECT_EQ(held->GetInt64(0, 0), 0) << "the nodes are given back";
}

TEST_F(JobTransitionSplitTest, ABasisOfAnotherVersionIsReadAgain) {
  CustomJob job = CreateGang("demo", SchedulingStrategy::kStandard, 0, "600s");
  JobRecord before = Read(job);
  auto t = JobStateMachine::FailInQueue(SnapshotOf(before.id, before.version, before.job),
                                        clock_.Now(), "never fits");
  ASSERT_TRUE(t.ok());
  JobTransitionBasis stale = BasisOf(before);
  stale.version = before.version + 1;  // read at another version: the store reads it again
  auto applied = store_->ApplyTransitions(
      {StateUpdate{before.id, before.version, *t, std::nullopt, stale, {}}});
  ASSERT_TRUE(applied.ok()) << applied.status().message();
  EXPECT_EQ(*applied, std::vector<bool>{true});
  EXPECT_EQ(Get(job).state, JobState::kFailed);
}

}  // namespace
}  // namespace trainyard
