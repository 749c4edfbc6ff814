// Node moves as PostgreSQL applies them: the give-back table a job's release looks its nodes'
// targets up in is NodeStateMachine::GiveBack (and RunThenGiveBack) for every state, cold and
// warm.
#include "storage/node_moves.h"

#include <gtest/gtest.h>

#include <set>
#include <tuple>

namespace trainyard::storage {
namespace {

TEST(NodeMovesTest, GiveBackTableHoldsTheMachinesMoveForEveryStateWarmthAndRun) {
  const GiveBackTable table = MachineGiveBackTable();
  ASSERT_EQ(table.from.size(), std::size(kAllNodeStates) * 2 * 2);
  ASSERT_EQ(table.warm.size(), table.from.size());
  ASSERT_EQ(table.ran.size(), table.from.size());
  ASSERT_EQ(table.back.size(), table.from.size());
  std::set<std::tuple<NodeState, bool, bool>> seen;
  for (size_t i = 0; i < table.from.size(); ++i) {
    EXPECT_TRUE(seen.emplace(table.from[i], table.warm[i], table.ran[i]).second) << "a row twice";
    const NodeGivenBack want = table.ran[i]
                                   ? NodeStateMachine::RunThenGiveBack(table.from[i], table.warm[i])
                                   : NodeStateMachine::GiveBack(table.from[i], table.warm[i]);
    EXPECT_EQ(table.back[i].to, want.to);
    EXPECT_EQ(table.back[i].keeps_images, want.keeps_images);
    EXPECT_EQ(table.back[i].keeps_since, want.keeps_since);
    EXPECT_EQ(table.back[i].ran, want.ran);
  }
}

// A run that started and ended in one write moves each node as the two moves would: a warm
// PROVISIONING node is BUSY for the run and READY after it with its images; a down one takes no
// run and stays down.
TEST(NodeMovesTest, ARunAndItsEndMoveANodeAsTheTwoMovesWould) {
  const NodeGivenBack warm = NodeStateMachine::RunThenGiveBack(NodeState::kProvisioning, true);
  EXPECT_TRUE(warm.ran);
  EXPECT_EQ(warm.to, NodeState::kReady);
  EXPECT_TRUE(warm.keeps_images);
  const NodeGivenBack down = NodeStateMachine::RunThenGiveBack(NodeState::kFailed, true);
  EXPECT_FALSE(down.ran);
  EXPECT_EQ(down.to, NodeState::kFailed);
  EXPECT_TRUE(down.keeps_since);
}

TEST(NodeMovesTest, GiveBackTableParamsAreSevenArraysInTheTablesOrder) {
  const pg::Params params = GiveBackTableParams();
  ASSERT_EQ(params.size(), 7u);
  // The first row: PROVISIONING, cold, not run, given back DELETED without its images.
  EXPECT_TRUE(params[0]->starts_with("{1,"));
  EXPECT_TRUE(params[1]->starts_with("{\"false\","));
  EXPECT_TRUE(params[2]->starts_with("{\"false\","));
  EXPECT_TRUE(params[3]->starts_with("{7,"));
  EXPECT_TRUE(params[4]->starts_with("{\"false\","));
  EXPECT_TRUE(params[5]->starts_with("{\"false\","));
  EXPECT_TRUE(params[6]->starts_with("{\"false\","));
}

TEST(NodeMovesTest, EventFromStatesAreTheMachinesSourcesAsLiterals) {
  // A repair starts only from FAILED; a node fails from every live state; nothing leaves by an
  // event no state answers, and the list then matches no node rather than every one.
  EXPECT_EQ(EventFromStatesSql(NodeEvent::kRepairStarted),
            std::to_string(static_cast<int>(NodeState::kFailed)));
  std::string live;
  for (NodeState state : kAllNodeStates) {
    if (!NodeStateMachine::Next(state, NodeEvent::kFailed, {})) continue;
    live += (live.empty() ? "" : ", ") + std::to_string(static_cast<int>(state));
  }
  EXPECT_EQ(EventFromStatesSql(NodeEvent::kFailed), live);
  EXPECT_NE(live.find(", "), std::string::npos);
  EXPECT_EQ(EventFromStatesSql(NodeEvent::kPreemptedGone, NodeFacts{.holds_job = true}), "NULL");
}

TEST(NodeMovesTest, EventMovesAreTheMachinesPairsForThatEvent) {
  // A run makes every live node BUSY; a down one has no move.
  pg::Params running = EventMovesParams(NodeEvent::kJobRunning);
  ASSERT_EQ(running.size(), 2u);
  EXPECT_EQ(running[0], "{1,2,3}");
  EXPECT_EQ(running[1], "{3,3,3}");
  pg::Params repair = EventMovesParams(NodeEvent::kRepairStarted);
  EXPECT_EQ(repair[0], "{5}");
  EXPECT_EQ(repair[1], "{6}");
  // The facts decide: a reclaimed slot a job still holds is not free again.
  EXPECT_EQ(EventMovesParams(NodeEvent::kPreemptedGone, NodeFacts{false})[0], "{4}");
  EXPECT_EQ(EventMovesParams(NodeEvent::kPreemptedGone, NodeFacts{true})[0], "{}");
}

TEST(NodeMovesTest, WithEventMovesAppendsThePairsAfterTheStatementsOwn) {
  pg::Params params = WithEventMoves({"a", "b"}, NodeEvent::kReclaimed);
  ASSERT_EQ(params.size(), 4u);
  EXPECT_EQ(params[0], "a");
  EXPECT_EQ(params[2], "{1,2,3}");
  EXPECT_EQ(params[3], "{4,4,4}");
}

TEST(NodeMovesTest, PlanGiveBackLeavesADownNodeWithItsTime) {
  const NodeMove move = PlanGiveBack("pool", 3, NodeState::kFailed, /*warm=*/true, 9);
  EXPECT_EQ(move.to, NodeState::kFailed);
  EXPECT_FALSE(move.keeps_images);
  EXPECT_TRUE(move.keeps_since);
  EXPECT_EQ(move.owner, 9);
}

}  // namespace
}  // namespace trainyard::storage
