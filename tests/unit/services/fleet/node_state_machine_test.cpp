// Every move a node slot can make, by event, and every move it cannot.
#include "services/fleet/node_state_machine.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace trainyard {
namespace {

using S = NodeState;
using E = NodeEvent;

std::optional<NodeState> Next(S from, E e, bool job = false, bool warm = false) {
  return NodeStateMachine::Next(from, e, NodeFacts{job, warm});
}

TEST(NodeStateMachineTest, AJobTakesAWarmNodeAtOnceAndBootsACold) {
  EXPECT_EQ(Next(S::kReady, E::kClaimed), S::kBusy);
  EXPECT_EQ(Next(S::kDeleted, E::kClaimed), S::kProvisioning);
  EXPECT_EQ(Next(S::kProvisioning, E::kJobRunning), S::kBusy);
  EXPECT_EQ(Next(S::kBusy, E::kUnclaimed), S::kReady);
  EXPECT_EQ(Next(S::kProvisioning, E::kUnclaimed), S::kDeleted);
  for (S taken : {S::kProvisioning, S::kBusy, S::kPreempted, S::kFailed, S::kRepairing}) {
    EXPECT_FALSE(Next(taken, E::kClaimed)) << NodeStateName(taken) << " is no free node";
  }
}

TEST(NodeStateMachineTest, AGivenBackNodeStaysWarmOnlyWhereItIsKeptAndDownStaysDown) {
  EXPECT_EQ(Next(S::kBusy, E::kGivenBack, false, /*warm=*/true), S::kReady);
  EXPECT_EQ(Next(S::kBusy, E::kGivenBack, false, /*warm=*/false), S::kDeleted);
  EXPECT_EQ(Next(S::kProvisioning, E::kGivenBack, false, false), S::kDeleted);
  for (S down : {S::kPreempted, S::kFailed, S::kRepairing}) {
    EXPECT_EQ(Next(down, E::kGivenBack, false, true), down);
  }
}

TEST(NodeStateMachineTest, ANewSlotIsBootedOnlyInAPoolKeptBooted) {
  EXPECT_EQ(NodeStateMachine::Initial(/*warm=*/true), S::kReady);
  EXPECT_EQ(NodeStateMachine::Initial(/*warm=*/false), S::kDeleted);
}

TEST(NodeStateMachineTest, AGivenBackNodeKeepsItsImagesOnlyWarmAndItsTimeOnlyDown) {
  const NodeGivenBack warm = NodeStateMachine::GiveBack(S::kBusy, /*warm=*/true);
  EXPECT_EQ(warm.to, S::kReady);
  EXPECT_TRUE(warm.keeps_images);
  EXPECT_FALSE(warm.keeps_since);
  const NodeGivenBack cold = NodeStateMachine::GiveBack(S::kReady, /*warm=*/false);
  EXPECT_EQ(cold.to, S::kDeleted);
  EXPECT_FALSE(cold.keeps_images);
  EXPECT_FALSE(cold.keeps_since);
  for (S down : {S::kPreempted, S::kFailed, S::kRepairing}) {
    const NodeGivenBack back = NodeStateMachine::GiveBack(down, /*warm=*/true);
    EXPECT_EQ(back.to, down);
    EXPECT_FALSE(back.keeps_images) << NodeStateName(down) << " keeps no image";
    EXPECT_TRUE(back.keeps_since) << NodeStateName(down) << " did not move";
  }
}

TEST(NodeStateMachineTest, FailuresTakeOnlyLiveNodesAndRepairsBringThemBackWhereTheyBelong) {
  for (S live : {S::kProvisioning, S::kReady, S::kBusy}) {
    EXPECT_EQ(Next(live, E::kReclaimed), S::kPreempted);
    EXPECT_EQ(Next(live, E::kFailed), S::kFailed);
  }
  for (S other : {S::kDeleted, S::kPreempted, S::kFailed, S::kRepairing}) {
    EXPECT_FALSE(Next(other, E::kReclaimed)) << NodeStateName(other);
    EXPECT_FALSE(Next(other, E::kFailed)) << NodeStateName(other);
  }
  EXPECT_EQ(Next(S::kFailed, E::kRepairStarted), S::kRepairing);
  EXPECT_EQ(Next(S::kRepairing, E::kRepaired, /*job=*/true), S::kBusy);
  EXPECT_EQ(Next(S::kRepairing, E::kRepaired, false, /*warm=*/true), S::kReady);
  EXPECT_EQ(Next(S::kRepairing, E::kRepaired), S::kDeleted);
  EXPECT_FALSE(Next(S::kFailed, E::kRepaired)) << "a repair starts first";
  EXPECT_EQ(Next(S::kPreempted, E::kPreemptedGone), S::kDeleted);
  EXPECT_FALSE(Next(S::kPreempted, E::kPreemptedGone, /*job=*/true));
}

TEST(NodeStateMachineTest, APersistentResourceKeepsWarmNodesAndBootsTheRest) {
  EXPECT_EQ(Next(S::kReady, E::kHeld), S::kReady);
  EXPECT_EQ(Next(S::kDeleted, E::kHeld), S::kProvisioning);
  EXPECT_EQ(Next(S::kProvisioning, E::kResourceBooted), S::kReady);
  EXPECT_EQ(Next(S::kReady, E::kResourceReboot), S::kProvisioning);
  EXPECT_FALSE(Next(S::kBusy, E::kResourceReboot, /*job=*/true))
      << "a job's node reboots as a failure";
  EXPECT_EQ(Next(S::kProvisioning, E::kUnheld), S::kDeleted);
}

// The whole table: every state a move reaches is one a node can be in, and no event moves a
// node out of a state it does not name (the stores' compare-and-sets match nothing then).
TEST(NodeStateMachineTest, EveryMoveIsBetweenKnownStates) {
  std::set<std::pair<S, S>> moves;
  for (int e = 0; e <= static_cast<int>(E::kResourceReboot); ++e) {
    for (S from : kAllNodeStates) {
      for (bool job : {false, true}) {
        for (bool warm : {false, true}) {
          if (auto to = Next(from, static_cast<E>(e), job, warm)) moves.insert({from, *to});
        }
      }
    }
  }
  for (const auto& [from, to] : moves) {
    EXPECT_FALSE(NodeStateName(to).empty());
    EXPECT_FALSE(from == S::kDeleted && to == S::kBusy) << "a cold node boots before it is busy";
    EXPECT_FALSE(from == S::kPreempted && NodeStateMachine::IsLive(to))
        << "a reclaimed node comes back only as a new slot (DELETED)";
  }
}

}  // namespace
}  // namespace trainyard
