// Polls answered from memory (storage/job_record_cache, job_change_listener, cached_job_store) on a
// real PostgreSQL, as two server processes on one database see them: each keeps what it was polled
// for, and a change committed by either (or by anything else on the database) reaches the other
// through LISTEN/NOTIFY; its own writes it reads at once.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "services/clock.h"
#include "services/fleet/fleet.h"
#include "services/jobs/job_service.h"
#include "services/jobs/job_state_machine.h"
#include "storage/cached_job_store.h"
#include "storage/job_change_listener.h"
#include "storage/job_record_cache.h"
#include "storage/pg.h"
#include "storage/pg_cycle_writes.h"
#include "storage/pg_job_store.h"
#include "storage/pg_project_repository.h"
#include "tests/integration/small_job.h"
#include "tests/integration/test_database.h"

namespace trainyard {
namespace {

using testing::SmallJob;

using std::chrono::milliseconds;
using std::chrono::seconds;

const ParentRef kParent{"demo", "us-central1"};

// One server process's API over the shared database.
struct Server {
  Server(const std::string& conninfo, const Clock& clock) {
    auto p = pg::Pool::Create(conninfo, 4, milliseconds(2000));
    EXPECT_TRUE(p.ok()) << p.status().message();
    pool = std::move(p).value();
    projects = std::make_unique<storage::PgProjectRepository>(*pool);
    store = std::make_unique<storage::PgJobStore>(*pool);
    cache = std::make_unique<storage::JobRecordCache>(1000);
    listener = std::make_unique<storage::JobChangeListener>(conninfo, *cache);
    cached = std::make_unique<storage::CachedJobStore>(*store, *cache);
    service = std::make_unique<JobService>(*projects, *cached, clock);
  }
  ~Server() {
    service.reset();
    cached.reset();
    listener.reset();
  }
  std::unique_ptr<pg::Pool> pool;
  std::unique_ptr<storage::PgProjectRepository> projects;
  std::unique_ptr<storage::PgJobStore> store;
  std::unique_ptr<storage::JobRecordCache> cache;
  std::unique_ptr<storage::JobChangeListener> listener;
  std::unique_ptr<storage::CachedJobStore> cached;
  std::unique_ptr<JobService> service;
};

class JobCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    conninfo_ = testing::FreshDatabase();
    a_ = std::make_unique<Server>(conninfo_, clock_);
    b_ = std::make_unique<Server>(conninfo_, clock_);
    ASSERT_TRUE(WaitFor([&] { return a_->cache->live() && b_->cache->live(); }));
    auto created = a_->service->Create(kParent, SmallJob("poll"), "req-1");
    ASSERT_TRUE(created.ok()) << created.status().message();
    job_ = *created;
    ref_ = JobRef{kParent, job_.name.substr(job_.name.rfind('/') + 1)};
    id_ = std::stoll(ref_.job_id);
  }

  // Polls with a deadline (never a sleep for the state): true once `done` holds.
  static bool WaitFor(const std::function<bool()>& done, milliseconds deadline = seconds(10)) {
    auto until = std::chrono::steady_clock::now() + deadline;
    while (!done()) {
      if (std::chrono::steady_clock::now() > until) return false;
      std::this_thread::yield();
    }
    return true;
  }

  void Sql(const std::string& sql) {
    auto conn = pg::Connection::Connect(conninfo_);
    ASSERT_TRUE(conn.ok()) << conn.status().message();
    auto r = (*conn)->Exec(sql);
    ASSERT_TRUE(r.ok()) << r.status().message();
  }

  StatusOr<CustomJob> GetOn(Server& server) { return server.service->Get(ref_); }

  // The PostgreSQL backends of both servers' change feeds.
  std::vector<int> ListenerBackends() {
    std::vector<int> pids;
    auto conn = pg::Connection::Connect(conninfo_);
    EXPECT_TRUE(conn.ok());
    if (!conn.ok()) return pids;
    auto r = (*conn)->Exec("SELECT pid FROM pg_stat_activity WHERE application_name = $1",
                           {std::string(storage::JobChangeListener::kApplicationName)});
    EXPECT_TRUE(r.ok());
    for (int i = 0; r.ok() && i < r->rows(); ++i)
      pids.push_back(static_cast<int>(r->GetInt64(i, 0)));
    return pids;
  }

  ManualClock clock_{Timestamp{} + std::chrono::hours(24 * 365 * 56)};
  std::string conninfo_;
  std::unique_ptr<Server> a_, b_;
  CustomJob job_;
  JobRef ref_;
  int64_t id_ = 0;
};

TEST_F(JobCacheTest, ARepeatedPollIsAnsweredFromMemory) {
  ASSERT_TRUE(GetOn(*b_).ok());
  auto before = b_->cache->stats();
  auto again = GetOn(*b_);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->state, JobState::kQueued);
  EXPECT_EQ(b_->cache->stats().hits, before.hits + 1);
}

TEST_F(JobCacheTest, AProcessReadsItsOwnCancelAtOnceAndTheOtherHearsOfIt) {
  ASSERT_EQ(GetOn(*a_)->state, JobState::kQueued);
  ASSERT_EQ(GetOn(*b_)->state, JobState::kQueued);  // both keep it now
  ASSERT_TRUE(a_->service->Cancel(ref_).ok());
  // A dropped it before Cancel returned: no wait.
  EXPECT_EQ(GetOn(*a_)->state, JobState::kCancelling);
  // B hears of it from the database.
  EXPECT_TRUE(WaitFor([&] { return GetOn(*b_)->state == JobState::kCancelling; }));
}

// The scheduler's verdicts change no version: their statement notifies its jobs itself, a few
// hundred to a notification (storage/job_change_notify.h), and each poll the other process keeps
// shows the verdict and the position.
TEST_F(JobCacheTest, TheSchedulersVerdictsReachEveryPollOfTheOther) {
  std::vector<int64_t> ids = {id_};
  for (int i = 0; i < 319; ++i) {
    auto created = a_->service->Create(kParent, SmallJob("many"), "");
    ASSERT_TRUE(created.ok()) << created.status().message();
    ids.push_back(std::stoll(created->name.substr(created->name.rfind('/') + 1)));
  }
  auto ref = [](int64_t id) { return JobRef{kParent, std::to_string(id)}; };
  for (int64_t id : ids) ASSERT_TRUE(b_->service->Get(ref(id)).ok());
  const auto kept = b_->cache->stats().hits;
  for (int64_t id : ids) ASSERT_EQ(b_->service->Get(ref(id))->state, JobState::kQueued);
  ASSERT_EQ(b_->cache->stats().hits, kept + 320) << "B answers these polls from memory";

  std::vector<VerdictUpdate> verdicts;
  for (size_t i = 0; i < ids.size(); ++i) {
    VerdictUpdate v;
    v.job_id = ids[i];
    v.verdict.code = ReasonCode::kNoCapacity;
    v.verdict.message = "no nodes free";
    v.verdict.position = static_cast<int64_t>(i) + 1;
    v.code_changed = true;
    verdicts.push_back(std::move(v));
  }
  auto conn = a_->pool->Acquire();
  ASSERT_TRUE(conn.ok()) << conn.status().message();
  auto tx = pg::Transaction::Begin(**conn);
  ASSERT_TRUE(tx.ok()) << tx.status().message();
  const Fleet fleet;
  storage::PgCycleWrites writes(*tx, fleet);
  auto written = writes.WriteVerdicts(verdicts, clock_.Now());
  ASSERT_TRUE(written.ok()) << written.status().message();
  EXPECT_EQ(*written, 320);
  ASSERT_TRUE(tx->Commit().ok());

  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_TRUE(WaitFor([&] {
      auto got = b_->service->Get(ref(ids[i]));
      return got.ok() && got->trainyard && got->trainyard->reason_code == "NO_CAPACITY" &&
             got->trainyard->queue_position == static_cast<int64_t>(i) + 1;
    })) << ids[i];
  }
}

// A pass moves its jobs in one statement that notifies them a few hundred ids at a time
// (storage/job_transition_sql.cpp), not by a row trigger: every job another process keeps is
// dropped, across more than one notification.
TEST_F(JobCacheTest, APassThatMovesManyJobsReachesEveryPollOfTheOther) {
  std::vector<JobRef> refs;
  for (int i = 0; i < 320; ++i) {
    auto created = a_->service->Create(kParent, SmallJob("many"), "");
    ASSERT_TRUE(created.ok()) << created.status().message();
    refs.push_back(JobRef{kParent, created->name.substr(created->name.rfind('/') + 1)});
  }
  for (const JobRef& ref : refs) ASSERT_TRUE(b_->service->Get(ref).ok());
  const auto kept = b_->cache->stats().hits;
  for (const JobRef& ref : refs) ASSERT_EQ(b_->service->Get(ref)->state, JobState::kQueued);
  ASSERT_EQ(b_->cache->stats().hits, kept + 320) << "B answers these polls from memory";

  std::vector<StateUpdate> updates;
  for (const JobRef& ref : refs) {
    const int64_t id = std::stoll(ref.job_id);
    auto failed = JobStateMachine::FailInQueue(JobSnapshot{id, 1, JobState::kQueued}, clock_.Now(),
                                               "no capacity ever");
    ASSERT_TRUE(failed.ok()) << failed.status().message();
    updates.push_back(
        StateUpdate{id, 1, std::move(failed).value(), std::nullopt, std::nullopt, {}});
  }
  auto applied = a_->store->ApplyTransitions(updates);
  ASSERT_TRUE(applied.ok()) << applied.status().message();
  ASSERT_EQ(std::count(applied->begin(), applied->end(), true), 320);
  for (const JobRef& ref : refs) {
    EXPECT_TRUE(WaitFor([&] {
      auto got = b_->service->Get(ref);
      return got.ok() && got->state == JobState::kFailed;
    })) << ref.job_id;
  }
}

TEST_F(JobCacheTest, ALeaseHeartbeatChangesNothingShownAndDropsNothing) {
  ASSERT_TRUE(GetOn(*b_).ok());
  auto claimed = a_->store->Claim("exec", 10, seconds(60));
  ASSERT_TRUE(claimed.ok());
  ASSERT_TRUE(a_->store->Heartbeat("exec", seconds(60)).ok());
  // Everything committed before Sync has been heard by B.
  ASSERT_TRUE(b_->listener->Sync(*b_->pool, seconds(5)).ok());
  EXPECT_EQ(b_->cache->stats().invalidations, 0u);
  auto before = b_->cache->stats().hits;
  ASSERT_TRUE(GetOn(*b_).ok());
  EXPECT_EQ(b_->cache->stats().hits, before + 1);
}

TEST_F(JobCacheTest, ADeleteOnOneProcessIsNotFoundOnTheOther) {
  ASSERT_TRUE(GetOn(*b_).ok());
  ASSERT_TRUE(a_->service->Cancel(ref_).ok());
  // The runtime's part, done by hand: the cancelling job stops.
  auto project = a_->projects->Resolve("demo", false);
  ASSERT_TRUE(project.ok());
  auto record = a_->store->Get(project->number, kParent.location, id_);
  ASSERT_TRUE(record.ok());
  auto stopped = JobStateMachine::Transition(SnapshotOf(id_, record->version, record->job),
                                             JobState::kCancelled, clock_.Now(), "stopped");
  ASSERT_TRUE(stopped.ok()) << stopped.status().message();
  StateUpdate update{id_, record->version, *stopped, std::nullopt, std::nullopt, {}};
  ASSERT_TRUE(*a_->cached->ApplyTransition(update));
  ASSERT_TRUE(a_->service->Delete(ref_).ok());
  EXPECT_TRUE(WaitFor([&] { return GetOn(*b_).status().code() == Code::kNotFound; }));
}

TEST_F(JobCacheTest, AKeptJobIsNotFoundUnderAnotherParent) {
  ASSERT_TRUE(GetOn(*b_).ok());
  auto other = b_->service->Get(JobRef{ParentRef{"demo", "europe-west4"}, ref_.job_id});
  EXPECT_EQ(other.status().code(), Code::kNotFound);
}

// The feed's connection dies (a restarted PostgreSQL, a killed backend): nothing is served from
// memory until it listens again, and then the poll shows what changed meanwhile.
TEST_F(JobCacheTest, ALostFeedServesNothingUntilItListensAgain) {
  ASSERT_TRUE(GetOn(*b_).ok());
  ASSERT_TRUE(b_->listener->Sync(*b_->pool, seconds(5)).ok());
  Sql(std::string("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                  "WHERE application_name = '") +
      storage::JobChangeListener::kApplicationName + "'");
  ASSERT_TRUE(WaitFor([&] { return !b_->cache->live() || b_->cache->stats().entries == 0; }));
  ASSERT_TRUE(a_->service->Cancel(ref_).ok());
  EXPECT_TRUE(WaitFor([&] { return b_->cache->live() && a_->cache->live(); }));
  EXPECT_EQ(GetOn(*b_)->state, JobState::kCancelling);
  ASSERT_TRUE(b_->listener->Sync(*b_->pool, seconds(5)).ok());
  auto before = b_->cache->stats().hits;
  EXPECT_EQ(GetOn(*b_)->state, JobState::kCancelling);
  EXPECT_EQ(b_->cache->stats().hits, before + 1);
}

}  // namespace
}  // namespace trainyard

namespace trainyard {
namespace {

// A feed whose server stops answering without closing the connection (a partition, a hung
// backend: here the backends stopped with SIGSTOP) is probed and taken for down within seconds,
// not left serving what it no longer hears about; once the server answers again it listens anew.
TEST_F(JobCacheTest, AFeedWhoseServerStopsAnsweringStopsServing) {
  ASSERT_TRUE(GetOn(*b_).ok());
  std::vector<int> backends = ListenerBackends();
  ASSERT_EQ(backends.size(), 2u);
  for (int pid : backends) ASSERT_EQ(kill(pid, SIGSTOP), 0) << std::strerror(errno);
  bool down = WaitFor([&] { return !b_->cache->live(); }, seconds(15));
  for (int pid : backends) kill(pid, SIGCONT);
  EXPECT_TRUE(down);
  EXPECT_TRUE(WaitFor([&] { return b_->cache->live(); }, seconds(15)));
  EXPECT_EQ(GetOn(*b_)->state, JobState::kQueued);
}

}  // namespace
}  // namespace trainyard
