// The pipeline primitive and the group committer on a real PostgreSQL: what callers rely on is
// that an acknowledged write is committed, that waiting writers share a commit, and that one bad
// write never fails the others.
#include "storage/group_commit.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "storage/pg.h"
#include "tests/integration/test_database.h"

namespace trainyard::storage {
namespace {

using std::chrono::milliseconds;

constexpr const char* kInsert = "INSERT INTO gc (id) VALUES ($1::bigint)";

std::unique_ptr<pg::Connection> Connect(const std::string& conninfo) {
  auto conn = pg::Connection::Connect(conninfo);
  EXPECT_TRUE(conn.ok()) << conn.status().message();
  return conn.ok() ? std::move(conn).value() : nullptr;
}

int64_t Count(pg::Connection& conn) {
  auto r = conn.Exec("SELECT count(*) FROM gc");
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r->GetInt64(0, 0) : -1;
}

pg::Statement Insert(int64_t id) { return pg::Statement{kInsert, {std::to_string(id)}}; }

// Polls with a deadline: the only way a test here waits for another thread's state.
bool Eventually(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(milliseconds(1));
  }
  return condition();
}

class GroupCommitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    conninfo_ = testing::FreshDatabase();
    conn_ = Connect(conninfo_);
    ASSERT_NE(conn_, nullptr);
    ASSERT_TRUE(conn_->ExecScript("CREATE TABLE gc (id bigint PRIMARY KEY)").ok());
  }
  std::string conninfo_;
  std::unique_ptr<pg::Connection> conn_;
};

TEST_F(GroupCommitTest, PipelineCommitsEveryStatementTogether) {
  ASSERT_TRUE(conn_->ExecBatch({Insert(1), Insert(2), Insert(3)}).ok());
  auto other = Connect(conninfo_);
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(Count(*other), 3);
  EXPECT_FALSE(conn_->in_transaction());
}

TEST_F(GroupCommitTest, PipelineWithAFailingStatementCommitsNothing) {
  ASSERT_TRUE(conn_->ExecBatch({Insert(1)}).ok());
  Status failed = conn_->ExecBatch({Insert(4), Insert(1), Insert(5)}).status();
  EXPECT_EQ(failed.code(), Code::kAlreadyExists) << failed.message();
  EXPECT_EQ(Count(*conn_), 1);  // 4 was rolled back with the duplicate; 5 never ran
  // The session is usable afterwards, outside any transaction, and so is the pipeline.
  EXPECT_FALSE(conn_->in_transaction());
  EXPECT_FALSE(conn_->broken());
  EXPECT_TRUE(conn_->ExecBatch({Insert(4)}).ok());
  EXPECT_EQ(Count(*conn_), 2);
}

TEST_F(GroupCommitTest, BatchInsideATransactionJoinsItAndReturnsEveryResult) {
  auto tx = pg::Transaction::Begin(*conn_);
  ASSERT_TRUE(tx.ok());
  auto results = conn_->ExecBatch(
      {Insert(1), Insert(2), pg::Statement{"SELECT count(*) FROM gc WHERE id > $1::bigint", {"0"}},
       pg::Statement{"DELETE FROM gc WHERE id = $1::bigint", {"9"}}});
  ASSERT_TRUE(results.ok()) << results.status().message();
  ASSERT_EQ(results->size(), 4u);
  EXPECT_EQ((*results)[0].affected(), 1);
  EXPECT_EQ((*results)[2].GetInt64(0, 0), 2);  // sees the batch's own earlier statements
  EXPECT_EQ((*results)[3].affected(), 0);
  EXPECT_TRUE(conn_->in_transaction());  // the sync did not end the caller's transaction
  ASSERT_TRUE(tx->Rollback().ok());
  EXPECT_EQ(Count(*conn_), 0);  // and rolling it back undoes the batch
}

TEST_F(GroupCommitTest, CommitReturnsAfterTheRowIsVisibleToOthers) {
  auto pool = pg::Pool::Create(conninfo_, 2, milliseconds(5000));
  ASSERT_TRUE(pool.ok());
  GroupCommitter committer(**pool);
  ASSERT_TRUE(committer.Commit({Insert(7)}).ok());
  EXPECT_EQ(Count(*conn_), 1);
  EXPECT_EQ(committer.stats().batches, 1);
  EXPECT_EQ(committer.stats().largest, 1);  // alone, nothing waits for company
}

// Lines callers up behind a flusher that waits for the pool's only connection (held by the
// test), so the batch the next flush takes is known exactly.
class QueuedCallersTest : public GroupCommitTest {
 protected:
  void SetUp() override {
    GroupCommitTest::SetUp();
    auto pool = pg::Pool::Create(conninfo_, 1, milliseconds(30000));
    ASSERT_TRUE(pool.ok());
    pool_ = std::move(pool).value();
    auto held = pool_->Acquire();
    ASSERT_TRUE(held.ok());
    held_.emplace(std::move(held).value());
    committer_ = std::make_unique<GroupCommitter>(*pool_, GroupCommitOptions{256, 1});
  }

  // The first caller becomes the flusher and blocks on the held connection; the rest queue.
  void StartCallers(const std::vector<int64_t>& ids) {
    results_.resize(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      threads_.emplace_back(
          [this, i, id = ids[i]] { results_[i] = committer_->Commit({Insert(id)}); });
      if (i == 0) {
        ASSERT_TRUE(Eventually([&] { return committer_->stats().flushing == 1; }));
      }
    }
    const auto waiting = static_cast<int64_t>(ids.size() - 1);
    ASSERT_TRUE(Eventually([&] { return committer_->stats().queued == waiting; }));
  }

  void ReleaseAndJoin() {
    held_.reset();
    for (auto& t : threads_) t.join();
  }

  std::unique_ptr<pg::Pool> pool_;
  std::optional<pg::PooledConnection> held_;
  std::unique_ptr<GroupCommitter> committer_;
  std::vector<std::thread> threads_;
  std::vector<Status> results_;
};

TEST_F(QueuedCallersTest, WaitingCallersShareOneCommit) {
  StartCallers({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  ReleaseAndJoin();
  for (const Status& s : results_) EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(Count(*conn_), 10);
  const auto stats = committer_->stats();
  EXPECT_EQ(stats.items, 10);
  EXPECT_EQ(stats.batches, 2);  // the first caller alone, then the nine that queued behind it
  EXPECT_EQ(stats.largest, 9);
  EXPECT_EQ(stats.reruns, 0);
}

TEST_F(QueuedCallersTest, OneBadItemFailsAloneAndTheRestCommit) {
  ASSERT_TRUE(conn_->Exec("INSERT INTO gc (id) VALUES (5)").ok());
  StartCallers({1, 2, 3, 4, 5, 6});
  ReleaseAndJoin();
  for (size_t i = 0; i < results_.size(); ++i) {
    if (i == 4) {
      EXPECT_EQ(results_[i].code(), Code::kAlreadyExists) << results_[i].message();
    } else {
      EXPECT_TRUE(results_[i].ok()) << i << ": " << results_[i].message();
    }
  }
  EXPECT_EQ(Count(*conn_), 6);  // 1-4, 6 and the 5 that was there
  EXPECT_EQ(committer_->stats().reruns, 1);
}

}  // namespace
}  // namespace trainyard::storage
