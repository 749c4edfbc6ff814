// The scheduler's batched commit against a real PostgreSQL: admissions whose job moved after the
// decision are skipped and give their claimed nodes back, while the rest of the batch commits.
#include <gtest/gtest.h>

#include "tests/integration/sim_fixture.h"

namespace trainyard {
namespace {

// Zone a: 4 reserved A3 Mega nodes for project demo kept booted (keepBooted), 2 on demand (cold).
constexpr const char* kFleet = R"({
  "bootTime": {"default": "60s"}, "imagePullGbps": 10, "imageSizeGb": {"default": 10},
  "zones": [{"zone": "us-central1-a", "pools": [
    {"machineType": "a3-megagpu-8g", "model": "RESERVATION", "reservation": "r1", "term": "1y", "keepBooted": true,
     "projects": ["demo"], "nodes": 4, "pricePerNodeHour": 36},
    {"machineType": "a3-megagpu-8g", "model": "ON_DEMAND", "nodes": 2, "pricePerNodeHour": 90}]}]})";

class SchedulerCommitTest : public testing::SimFixture {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(StartFleet(kFleet)); }

  static int64_t IdOf(const CustomJob& job) {
    return std::stoll(job.name.substr(job.name.rfind('/') + 1));
  }

  AdmissionDecision Admit(const CustomJob& job, int64_t version, const std::string& pool,
                          int units) {
    AdmissionDecision a;
    a.job_id = IdOf(job);
    a.version = version;
    a.placement.zone = "us-central1-a";
    const int index = fleet_.PoolIndex(pool);
    a.placement.pools.push_back({index, units, fleet_.pools[index].machine_type, 0});
    a.image_uri = "us-docker.pkg.dev/x/train:1";
    a.message = "admitted by the test";
    return a;
  }

  // Commits `cycle` as the leader.
  StatusOr<CommitOutcome> CommitAsLeader(const CycleResult& cycle) {
    auto leading = scheduler_store_->TryLead();
    if (!leading.ok()) return leading.status();
    if (!*leading) return Status(Code::kAborted, "not the leader");
    return scheduler_store_->Commit(AdmissionPlanner(fleet_, true), cycle, clock_.Now());
  }

  // (state, job_id) of every node of `pool`, by ordinal.
  std::vector<std::pair<int, int64_t>> Nodes(const std::string& pool) {
    auto conn = pool_->Acquire();
    auto r = (*conn)->Exec(
        "SELECT state, COALESCE(job_id, 0) FROM nodes WHERE pool_id = $1 ORDER BY ordinal", {pool});
    std::vector<std::pair<int, int64_t>> out;
    if (!r.ok()) return out;
    for (int i = 0; i < r->rows(); ++i) {
      out.emplace_back(static_cast<int>(r->GetInt64(i, 0)), r->GetInt64(i, 1));
    }
    return out;
  }

  const std::string reserved_ = "us-central1-a/a3-megagpu-8g/RESERVATION/r1";
  const std::string on_demand_ = "us-central1-a/a3-megagpu-8g/ON_DEMAND";
};

TEST_F(SchedulerCommitTest, AStaleAdmissionGivesItsNodesBackAndTheRestCommits) {
  CustomJob first = CreateGang("demo", SchedulingStrategy::kStandard, 1, "600s");
  CustomJob moved = CreateGang("demo", SchedulingStrategy::kStandard, 1, "600s");
  CustomJob cold = CreateGang("demo", SchedulingStrategy::kStandard, 1, "600s");
  CycleResult cycle;
  cycle.admissions.push_back(Admit(first, 1, reserved_, 2));
  cycle.admissions.push_back(Admit(moved, 2, reserved_, 2));  // the job moved on since: version 2
  cycle.admissions.push_back(Admit(cold, 1, on_demand_, 2));
  auto outcome = CommitAsLeader(cycle);
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_EQ(outcome->admitted, 2);
  EXPECT_EQ(outcome->skipped, 1);

  // The first job holds two warm nodes (BUSY); the stale one's two are READY and free again.
  const std::vector<std::pair<int, int64_t>> reserved = {
      {3, IdOf(first)}, {3, IdOf(first)}, {2, 0}, {2, 0}};
  EXPECT_EQ(Nodes(reserved_), reserved);
  // Cold on-demand nodes are PROVISIONING for their job.
  const std::vector<std::pair<int, int64_t>> on_demand = {{1, IdOf(cold)}, {1, IdOf(cold)}};
  EXPECT_EQ(Nodes(on_demand_), on_demand);

  auto got = service_->Get(JobRef{ParentRef{"demo", "us-central1"}, std::to_string(IdOf(moved))});
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->state, JobState::kQueued);
  auto admitted =
      service_->Get(JobRef{ParentRef{"demo", "us-central1"}, std::to_string(IdOf(cold))});
  ASSERT_TRUE(admitted.ok() && admitted->trainyard);
  EXPECT_EQ(admitted->state, JobState::kPending);
  ASSERT_EQ(admitted->trainyard->pools.size(), 1u);
  EXPECT_EQ(admitted->trainyard->pools[0].nodes.size(), 2u);
}

// A commit reads only the lowest free nodes of each state and the warm ones caching the image,
// yet chooses what reading them all would: a warm node with the image above warm ones without,
// then the lowest warm one, then cold ones.
TEST_F(SchedulerCommitTest, AnAdmissionTakesTheWarmNodeWithItsImageAboveLowerOnes) {
  {
    auto conn = pool_->Acquire();
    ASSERT_TRUE(conn.ok());
    ASSERT_TRUE((*conn)
                    ->Exec("UPDATE nodes SET image_cache = '{us-docker.pkg.dev/x/train:1}' "
                           "WHERE pool_id = $1 AND ordinal = 2",
                           {reserved_})
                    .ok());
  }
  CustomJob cached = CreateGang("demo", SchedulingStrategy::kStandard, 1, "600s");
  CustomJob warm = CreateGang("demo", SchedulingStrategy::kStandard, 1, "600s");
  CustomJob cold = CreateGang("demo", SchedulingStrategy::kStandard, 1, "600s");
  CycleResult cycle;
  cycle.admissions.push_back(Admit(cached, 1, reserved_, 1));
  cycle.admissions.push_back(Admit(warm, 1, reserved_, 1));
  cycle.admissions.push_back(Admit(cold, 1, on_demand_, 1));
  auto outcome = CommitAsLeader(cycle);
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_EQ(outcome->admitted, 3);
  const std::vector<std::pair<int, int64_t>> reserved = {
      {3, IdOf(warm)}, {2, 0}, {3, IdOf(cached)}, {2, 0}};
  EXPECT_EQ(Nodes(reserved_), reserved);
  const std::vector<std::pair<int, int64_t>> on_demand = {{1, IdOf(cold)}, {7, 0}};
  EXPECT_EQ(Nodes(on_demand_), on_demand);
}

// A preemption and another admission into the same pool in one commit are both admitted. The
// pool's read once the victim was gone used to be bounded by the preemptor's own units and to
// replace the commit's view of the pool, which left nothing for the admission after it: it was
// skipped, and admitted a pass later than on the memory store (found by StorePropertyTest).
TEST_F(SchedulerCommitTest, APreemptionLeavesTheOtherAdmissionsOfItsPoolTheirNodes) {
  CustomJob victim = CreateGang("demo", SchedulingStrategy::kStandard, 0, "600s");
  CycleResult first;
  first.admissions.push_back(Admit(victim, 1, on_demand_, 1));
  auto admitted = CommitAsLeader(first);
  ASSERT_TRUE(admitted.ok()) << admitted.status().message();
  ASSERT_EQ(admitted->admitted, 1);

  CustomJob preemptor = CreateGang("demo", SchedulingStrategy::kStandard, 0, "600s");
  CustomJob other = CreateGang("demo", SchedulingStrategy::kStandard, 0, "600s");
  CycleResult cycle;
  AdmissionDecision preempting = Admit(preemptor, 1, on_demand_, 1);
  preempting.victims = {IdOf(victim)};
  cycle.admissions.push_back(preempting);
  cycle.admissions.push_back(Admit(other, 1, on_demand_, 1));
  auto outcome = CommitAsLeader(cycle);
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_EQ(outcome->admitted, 2);
  EXPECT_EQ(outcome->preempted, 1);
  EXPECT_EQ(outcome->skipped, 0);
  // The victim's cold node went back and the preemptor took it; the other took the free one.
  const std::vector<std::pair<int, int64_t>> on_demand = {{1, IdOf(preemptor)}, {1, IdOf(other)}};
  EXPECT_EQ(Nodes(on_demand_), on_demand);
  EXPECT_EQ(Get(victim).state, JobState::kQueued);
}

// The change feed: a transaction that took its sequence values first but commits after a later one
// is still read (creates are group-committed and runtime passes are one transaction, so this
// happens all the time under load).
TEST_F(SchedulerCommitTest, TheChangeFeedNeverSkipsAJobThatCommitsLate) {
  CustomJob first = CreateGang("demo", SchedulingStrategy::kStandard, 1, "600s");
  auto late_conn = pg::Connection::Connect(conninfo_);
  ASSERT_TRUE(late_conn.ok());
  auto late = pg::Transaction::Begin(**late_conn);
  ASSERT_TRUE(late.ok());
  const int64_t late_id = 4242424242424242424;
  ASSERT_TRUE(late->Exec("INSERT INTO custom_jobs (id, project_number, location, display_name, "
                         "state, job_spec, labels, create_time, update_time) "
                         "SELECT $1::bigint, project_number, location, 'late', state, job_spec, "
                         "labels, create_time, update_time FROM custom_jobs WHERE id = $2::bigint",
                         {std::to_string(late_id), std::to_string(IdOf(first))})
                  .ok());
  CustomJob after = CreateGang("demo", SchedulingStrategy::kStandard, 1, "600s");

  auto ids = [](const std::vector<JobRecord>& rows) {
    std::vector<int64_t> out;
    for (const JobRecord& r : rows) out.push_back(r.id);
    return out;
  };
  // While the late transaction is open, nothing from it or after it is read.
  auto before = scheduler_store_->JobChanges(ChangeCursor{}, 100);
  ASSERT_TRUE(before.ok()) << before.status().message();
  EXPECT_EQ(ids(*before), std::vector<int64_t>{IdOf(first)});
  ChangeCursor cursor{before->back().change_xid, before->back().change_seq};

  ASSERT_TRUE(late->Commit().ok());
  auto rest = scheduler_store_->JobChanges(cursor, 100);
  ASSERT_TRUE(rest.ok()) << rest.status().message();
  EXPECT_EQ(ids(*rest), (std::vector<int64_t>{late_id, IdOf(after)}));
  cursor = ChangeCursor{rest->back().change_xid, rest->back().change_seq};
  auto none = scheduler_store_->JobChanges(cursor, 100);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty()) << "each change is read once";
}

// Only a queued job's row carries its spec: the scheduler keeps each job's shape from that row (a
// spec never changes), and decoding it again at every later change was most of its work.
TEST_F(SchedulerCommitTest, TheChangeFeedCarriesASpecOnlyWhileItsJobIsQueued) {
  CustomJob job = CreateGang("demo", SchedulingStrategy::kStandard, 1, "600s");
  ASSERT_NO_FATAL_FAILURE(WaitForFeed());
  auto queued = scheduler_store_->JobChanges(ChangeCursor{}, 100);
  ASSERT_TRUE(queued.ok()) << queued.status().message();
  ASSERT_EQ(queued->size(), 1u);
  EXPECT_FALSE(queued->front().without_spec);
  EXPECT_EQ(queued->front().job.job_spec.worker_pool_specs.size(), 2u);

  Step();
  const JobState now = Get(job).state;
  ASSERT_TRUE(now == JobState::kPending || now == JobState::kRunning) << static_cast<int>(now);
  ASSERT_NO_FATAL_FAILURE(WaitForFeed());
  auto admitted = scheduler_store_->JobChanges(ChangeCursor{}, 100);
  ASSERT_TRUE(admitted.ok()) << admitted.status().message();
  ASSERT_EQ(admitted->size(), 1u);
  EXPECT_EQ(admitted->front().job.state, now);
  EXPECT_TRUE(admitted->front().without_spec);
  EXPECT_TRUE(admitted->front().job.job_spec.worker_pool_specs.empty());
  EXPECT_FALSE(admitted->front().run) << "the scheduler has no use for the replicas";
  ASSERT_TRUE(admitted->front().job.trainyard);
  EXPECT_EQ(admitted->front().job.trainyard->zone, "us-central1-a") << "its placement is read";
}

// The feed is in transaction order, not in the order of the xids' text: "10" sorts before "9".
// Read a row at a time, a cursor that jumped to xid 10 first would never come back for 9.
TEST_F(SchedulerCommitTest, TheChangeFeedFollowsTransactionsInNumericOrder) {
  CustomJob nine = CreateGang("demo", SchedulingStrategy::kStandard, 1, "600s");
  CustomJob ten = CreateGang("demo", SchedulingStrategy::kStandard, 1, "600s");
  {
    auto conn = pool_->Acquire();
    ASSERT_TRUE(conn.ok());
    // The same version, so the change trigger keeps what is written (both long committed).
    ASSERT_TRUE((*conn)
                    ->Exec("UPDATE custom_jobs SET change_xid = CASE id WHEN $1::bigint THEN "
                           "'9'::xid8 ELSE '10'::xid8 END WHERE id IN ($1::bigint, $2::bigint)",
                           {std::to_string(IdOf(nine)), std::to_string(IdOf(ten))})
                    .ok());
  }
  std::vector<int64_t> read;
  ChangeCursor cursor;
  for (int i = 0; i < 3; ++i) {
    auto one = scheduler_store_->JobChanges(cursor, 1);
    ASSERT_TRUE(one.ok()) << one.status().message();
    if (one->empty()) break;
    read.push_back(one->front().id);
    cursor = ChangeCursor{one->front().change_xid, one->front().change_seq};
  }
  EXPECT_EQ(read, (std::vector<int64_t>{IdOf(nine), IdOf(ten)}));
}

// A server starting beside a busy leader: its fleet sync neither waits on node rows another
// transaction holds (it used to, hit lock_timeout and exit) nor rewrites nodes it need not.
TEST_F(SchedulerCommitTest, ASecondServersFleetSyncWaitsOnNoLockedNode) {
  auto holder = pool_->Acquire();
  ASSERT_TRUE(holder.ok());
  ASSERT_TRUE((*holder)->ExecScript("BEGIN").ok());
  ASSERT_TRUE(
      (*holder)
          ->Exec("UPDATE nodes SET state_since = state_since WHERE pool_id = $1", {reserved_})
          .ok());
  auto synced = scheduler_store_->SyncNodes(fleet_, clock_.Now());
  ASSERT_TRUE((*holder)->ExecScript("ROLLBACK").ok());
  ASSERT_TRUE(synced.ok()) << synced.status().message();

  // A fleet file that stops keeping the reserved nodes booted reaches every one of them.
  Fleet cold = fleet_;
  cold.pools[fleet_.PoolIndex(reserved_)].keep_booted = false;
  ASSERT_TRUE(scheduler_store_->SyncNodes(cold, clock_.Now()).ok());
  auto conn = pool_->Acquire();
  auto warm = (*conn)->Exec("SELECT count(*) FROM nodes WHERE keep_warm");
  ASSERT_TRUE(warm.ok());
  EXPECT_EQ(warm->GetInt64(0, 0), 0);
  auto all = (*conn)->Exec("SELECT count(*) FROM nodes");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->GetInt64(0, 0), 6);
}

}  // namespace
}  // namespace trainyard
