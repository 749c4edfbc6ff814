// Node moves as compare-and-sets (storage/node_moves.h): a node another session moved between
// this transaction's read and its apply is a lost race, reported and left as that session left
// it; the others move as NodeStateMachine says.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "storage/node_moves.h"
#include "storage/row_codec.h"
#include "tests/integration/test_database.h"

namespace trainyard {
namespace {

using storage::ApplyNodeMoves;
using storage::NodeMovesApplied;
using storage::NodeWrite;

std::unique_ptr<pg::Connection> MustConnect(const std::string& conninfo) {
  auto conn = pg::Connection::Connect(conninfo);
  EXPECT_TRUE(conn.ok()) << conn.status().message();
  return conn.ok() ? std::move(conn).value() : nullptr;
}

std::string StateParam(NodeState s) { return std::to_string(static_cast<int>(s)); }

class NodeMovesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string db = testing::FreshDatabase();
    mine_ = MustConnect(db);
    theirs_ = MustConnect(db);
    ASSERT_TRUE(mine_ && theirs_);
    // Two READY nodes of a keepBooted pool, since t = 1 s.
    auto r = theirs_->Exec(
        "INSERT INTO nodes (pool_id, ordinal, zone, machine_type, keep_warm, state, state_since) "
        "SELECT 'p', g, 'z', 'm', true, $1::smallint, " TY_TS("1000000") " "
        "FROM generate_series(0, 1) AS g",
        {StateParam(NodeState::kReady)});
    ASSERT_TRUE(r.ok()) << r.status().message();
  }

  struct Row {
    NodeState state;
    bool has_job;
    int64_t job;
    int64_t since_us;
  };
  Row Read(pg::Connection& conn, int64_t ordinal) {
    auto r = conn.Exec(
        "SELECT state, job_id IS NOT NULL, COALESCE(job_id, 0), " TY_MICROS("state_since") " "
        "FROM nodes WHERE pool_id = 'p' AND ordinal = $1::int",
        {std::to_string(ordinal)});
    EXPECT_TRUE(r.ok() && r->rows() == 1);
    if (!r.ok() || r->rows() != 1) return {};
    return Row{static_cast<NodeState>(r->GetInt64(0, 0)), r->GetBool(0, 1), r->GetInt64(0, 2),
               r->GetInt64(0, 3)};
  }

  std::unique_ptr<pg::Connection> mine_, theirs_;
};

TEST_F(NodeMovesTest, ANodeMovedBetweenTheReadAndTheApplyIsALostRaceAndStaysAsItWas) {
  auto tx = pg::Transaction::Begin(*mine_);
  ASSERT_TRUE(tx.ok()) << tx.status().message();
  // The read, and the claims NodeStateMachine makes of it: READY nodes go BUSY for job 42.
  std::vector<NodeMove> moves;
  for (int64_t ordinal : {0, 1}) {
    const Row row = Read(*mine_, ordinal);
    ASSERT_EQ(row.state, NodeState::kReady);
    std::optional<NodeMove> move = PlanNodeMove("p", ordinal, row.state, NodeEvent::kClaimed, 42);
    ASSERT_TRUE(move.has_value());
    EXPECT_EQ(move->to, NodeState::kBusy);
    moves.push_back(*move);
  }
  // Planted: another session fails node 1 meanwhile, at t = 2 s.
  auto planted = theirs_->Exec(
      "UPDATE nodes SET state = $1::smallint, state_since = " TY_TS("2000000") " "
      "WHERE pool_id = 'p' AND ordinal = 1",
      {StateParam(NodeState::kFailed)});
  ASSERT_TRUE(planted.ok()) << planted.status().message();

  auto applied =
      ApplyNodeMoves(*tx, NodeWrite::kClaimForJob, moves, Timestamp(std::chrono::seconds(3)));
  ASSERT_TRUE(applied.ok()) << applied.status().message();
  ASSERT_EQ(applied->applied.size(), 1u);
  EXPECT_EQ(applied->applied[0].ordinal, 0);
  ASSERT_EQ(applied->lost.size(), 1u);
  EXPECT_EQ(applied->lost[0].ordinal, 1);
  ASSERT_TRUE(tx->Commit().ok());

  const Row claimed = Read(*theirs_, 0);
  EXPECT_EQ(claimed.state, NodeState::kBusy);
  EXPECT_EQ(claimed.job, 42);
  EXPECT_EQ(claimed.since_us, 3000000);
  const Row raced = Read(*theirs_, 1);
  EXPECT_EQ(raced.state, NodeState::kFailed) << "the lost race wrote no state";
  EXPECT_FALSE(raced.has_job) << "nor the job";
  EXPECT_EQ(raced.since_us, 2000000) << "nor the time";
}

TEST_F(NodeMovesTest, AnApplyWhoseEveryNodeMovedChangesNothing) {
  auto tx = pg::Transaction::Begin(*mine_);
  ASSERT_TRUE(tx.ok()) << tx.status().message();
  std::optional<NodeMove> move =
      PlanNodeMove("p", 0, Read(*mine_, 0).state, NodeEvent::kHeld, /*owner=*/7);
  ASSERT_TRUE(move.has_value());
  // Planted: node 0 is claimed by job 9 meanwhile (it stays READY: only its job says it moved).
  auto planted = theirs_->Exec("UPDATE nodes SET job_id = 9 WHERE pool_id = 'p' AND ordinal = 0");
  ASSERT_TRUE(planted.ok()) << planted.status().message();
  auto applied =
      ApplyNodeMoves(*tx, NodeWrite::kHoldForResource, {*move}, Timestamp(std::chrono::seconds(3)));
  ASSERT_TRUE(applied.ok()) << applied.status().message();
  EXPECT_TRUE(applied->applied.empty());
  EXPECT_EQ(applied->lost.size(), 1u);
  ASSERT_TRUE(tx->Commit().ok());
  auto held = theirs_->Exec("SELECT count(*) FROM nodes WHERE resource_uid IS NOT NULL");
  ASSERT_TRUE(held.ok());
  EXPECT_EQ(held->GetInt64(0, 0), 0);
  EXPECT_EQ(Read(*theirs_, 0).since_us, 1000000);
}

}  // namespace
}  // namespace trainyard
