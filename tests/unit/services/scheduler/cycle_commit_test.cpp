// CommitCycle over a fake store: the order of a cycle's writes, which decisions it skips when
// what they were planned on moved, and what a skipped one gives back.
#include "services/scheduler/cycle_commit.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace trainyard {
namespace {

using namespace std::chrono_literals;

const Timestamp kT0 = FromUnixMicros(1'800'000'000'000'000);
const std::string kPool = "us-central1-a/a3-megagpu-8g/RESERVATION/r1";

Fleet OnePoolFleet(int64_t units) {
  Fleet f;
  f.epoch = kT0;
  CapacityPool reserved;
  reserved.id = kPool;
  reserved.zone = "us-central1-a";
  reserved.machine_type = "a3-megagpu-8g";
  reserved.model = ConsumptionModel::kReservation;
  reserved.units = units;
  reserved.price_per_node_hour = 50;
  f.pools.push_back(reserved);
  return f;
}

AdmissionDecision Admission(int64_t job, int64_t units, std::vector<int64_t> victims = {}) {
  AdmissionDecision a;
  a.job_id = job;
  a.version = 3;
  a.placement.zone = "us-central1-a";
  a.placement.pools.push_back({0, units, "", 0});
  a.victims = std::move(victims);
  a.message = "admitted";
  return a;
}

// A store of one pool's nodes that applies every write as a compare-and-set and logs each call.
class FakeWrites : public CycleWrites {
 public:
  struct Node {
    NodeState state = NodeState::kReady;
    int64_t job = 0;
  };
  std::vector<std::string> calls;
  std::map<int64_t, Node> nodes;                // by ordinal
  std::set<int64_t> lose;                       // a move of these nodes loses its race
  std::map<int64_t, JobSnapshot> jobs;          // what LockJob finds
  std::set<int64_t> moved_on;                   // jobs and resources whose compare-and-set loses
  std::vector<NodeMoveBatch> batches;           // every MoveNodes, as asked
  std::vector<std::vector<int64_t>> admitting;  // every Admit's jobs

  Status ReadFree(const std::vector<FreeNodesRead>& reads, FreeByPool& free,
                  NodeStatesRead& states) override {
    calls.push_back("ReadFree");
    std::vector<FreeNode> found;
    for (const auto& [ordinal, n] : nodes) {
      if (n.job != 0 || !NodeStateMachine::IsFree(n.state)) continue;
      found.push_back({ordinal, n.state == NodeState::kReady, {}});
      states[{kPool, ordinal}] = n.state;
    }
    for (const FreeNodesRead& read : reads) {
      free.insert_or_assign({read.pool, read.holder}, FreeUnits(1, found));
    }
    return Status::Ok();
  }
  Status Mark() override {
    calls.push_back("Mark");
    marked_ = nodes;
    return Status::Ok();
  }
  Status RollbackToMark() override {
    calls.push_back("RollbackToMark");
    nodes = marked_;
    return Status::Ok();
  }
  Status ReleaseMark() override {
    calls.push_back("ReleaseMark");
    return Status::Ok();
  }
  StatusOr<std::optional<JobSnapshot>> LockJob(int64_t id) override {
    calls.push_back("LockJob");
    auto it = jobs.find(id);
    return it == jobs.end() ? std::optional<JobSnapshot>() : std::optional(it->second);
  }
  StatusOr<bool> ApplyTransition(const StateUpdate& update) override {
    calls.push_back("ApplyTransition");
    for (auto& [ordinal, n] : nodes) {
      if (n.job == update.id) n = Node{NodeState::kReady, 0};  // a victim's nodes, given back
    }
    return true;
  }
  StatusOr<NodeMoveBatch> MoveNodes(const NodeMoveBatch& moves, const std::vector<StateUpdate*>&,
                                    Timestamp) override {
    calls.push_back("MoveNodes");
    batches.push_back(moves);
    NodeMoveBatch applied;
    auto apply = [&](const std::vector<NodeMove>& from, std::vector<NodeMove>& into, bool take) {
      for (const NodeMove& m : from) {
        Node& n = nodes[m.ordinal];
        if (lose.contains(m.ordinal) || n.state != m.from) continue;
        n = Node{m.to, take ? m.owner : 0};
        into.push_back(m);
      }
    };
    apply(moves.holds, applied.holds, true);
    apply(moves.claims, applied.claims, true);
    apply(moves.unclaims, applied.unclaims, false);
    apply(moves.unholds, applied.unholds, false);
    return applied;
  }
  StatusOr<Admitted> Admit(const std::vector<HoldPlan>& holds, const std::vector<StateUpdate>& in,
                           Timestamp) override {
    calls.push_back("Admit");
    Admitted out;
    admitting.emplace_back();
    for (const HoldPlan& h : holds) {
      if (!moved_on.contains(h.resource_uid)) out.resources.insert(h.resource_uid);
    }
    for (const StateUpdate& u : in) {
      admitting.back().push_back(u.id);
      if (!moved_on.contains(u.id)) out.jobs.insert(u.id);
    }
    return out;
  }
  StatusOr<int> FailHolds(const std::vector<HoldFailure>& f, Timestamp) override {
    calls.push_back("FailHolds");
    return static_cast<int>(f.size());
  }
  StatusOr<int> FailJobs(std::vector<StateUpdate>& f) override {
    calls.push_back("FailJobs");
    return static_cast<int>(f.size());
  }
  Status WriteNotices(const std::vector<PreemptionNotice>&, Timestamp) override {
    calls.push_back("WriteNotices");
    return Status::Ok();
  }
  Status WriteHoldVerdicts(const std::vector<HoldVerdict>&) override {
    calls.push_back("WriteHoldVerdicts");
    return Status::Ok();
  }
  StatusOr<int> WriteVerdicts(const std::vector<VerdictUpdate>& v, Timestamp) override {
    calls.push_back("WriteVerdicts");
    return static_cast<int>(v.size());
  }

 private:
  std::map<int64_t, Node> marked_;
};

FakeWrites::Node Free() { return {NodeState::kReady, 0}; }

// Two admissions of two nodes each; one of the second's nodes moved since the read: it is
// skipped, the first admitted, and the node it did claim goes back as it was.
TEST(CycleCommitTest, ALostNodeRaceSkipsTheAdmissionAndGivesItsOtherNodesBack) {
  Fleet fleet = OnePoolFleet(4);
  AdmissionPlanner planner(fleet, /*simulated_startup=*/false);
  FakeWrites store;
  for (int64_t i = 0; i < 4; ++i) store.nodes[i] = Free();
  store.lose = {3};
  CycleResult cycle;
  cycle.admissions = {Admission(7, 2), Admission(8, 2)};
  auto outcome = CommitCycle(planner, cycle, kT0, store);
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_EQ(outcome->admitted, 1);
  EXPECT_EQ(outcome->skipped, 1);
  ASSERT_EQ(store.admitting.size(), 1u);
  EXPECT_EQ(store.admitting[0], std::vector<int64_t>{7});
  ASSERT_EQ(store.batches.size(), 2u);  // the claims, then the way back
  ASSERT_EQ(store.batches[1].unclaims.size(), 1u);
  EXPECT_EQ(store.batches[1].unclaims[0].ordinal, 2);
  EXPECT_EQ(store.nodes[0].job, 7);
  EXPECT_EQ(store.nodes[1].job, 7);
  EXPECT_EQ(store.nodes[2].job, 0);
  EXPECT_EQ(store.nodes[2].state, NodeState::kReady);
}

// The job was cancelled between the cycle's read and its commit: its compare-and-set loses and
// every node it claimed goes back.
TEST(CycleCommitTest, AJobThatMovedOnGivesItsClaimedNodesBack) {
  Fleet fleet = OnePoolFleet(2);
  AdmissionPlanner planner(fleet, /*simulated_startup=*/false);
  FakeWrites store;
  store.nodes = {{0, Free()}, {1, Free()}};
  store.moved_on = {7};
  CycleResult cycle;
  cycle.admissions = {Admission(7, 2)};
  auto outcome = CommitCycle(planner, cycle, kT0, store);
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_EQ(outcome->admitted, 0);
  EXPECT_EQ(outcome->skipped, 1);
  ASSERT_EQ(store.batches.size(), 2u);
  EXPECT_EQ(store.batches[1].unclaims.size(), 2u);
  EXPECT_EQ(store.nodes[0].job, 0);
  EXPECT_EQ(store.nodes[1].job, 0);
}

// A second victim that finished meanwhile is no victim: the first one's requeue is rolled back
// and the admission skipped, with nothing claimed.
TEST(CycleCommitTest, AVictimThatMovedOnRollsThePreemptingAdmissionBack) {
  Fleet fleet = OnePoolFleet(2);
  AdmissionPlanner planner(fleet, /*simulated_startup=*/false);
  FakeWrites store;
  store.nodes = {{0, {NodeState::kBusy, 20}}, {1, {NodeState::kBusy, 21}}};
  store.jobs[20] = JobSnapshot{20, 5, JobState::kRunning, true};
  store.jobs[21] = JobSnapshot{21, 5, JobState::kSucceeded, true};
  CycleResult cycle;
  cycle.admissions = {Admission(9, 2, {20, 21})};
  auto outcome = CommitCycle(planner, cycle, kT0, store);
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_EQ(outcome->admitted, 0);
  EXPECT_EQ(outcome->preempted, 0);
  EXPECT_EQ(outcome->skipped, 1);
  EXPECT_EQ(store.calls, (std::vector<std::string>{"ReadFree", "Mark", "LockJob", "ApplyTransition",
                                                   "LockJob", "RollbackToMark"}));
  EXPECT_EQ(store.nodes[0].job, 20);  // the savepoint took the requeue back
}

// A preempting admission whose claim lost a race after its victim's nodes were read free rolls
// back, and the commit's free view with it: the next admission takes a node that was free
// before, not one the rolled-back victim still runs on.
TEST(CycleCommitTest, ARolledBackPreemptionRestoresTheFreeView) {
  Fleet fleet = OnePoolFleet(4);
  AdmissionPlanner planner(fleet, /*simulated_startup=*/false);
  FakeWrites store;
  store.nodes = {
      {0, {NodeState::kBusy, 20}}, {1, {NodeState::kBusy, 20}}, {2, Free()}, {3, Free()}};
  store.jobs[20] = JobSnapshot{20, 5, JobState::kRunning, true};
  store.lose = {0};
  CycleResult cycle;
  cycle.admissions = {Admission(9, 3, {20}), Admission(10, 1)};
  auto outcome = CommitCycle(planner, cycle, kT0, store);
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_EQ(outcome->admitted, 1);
  EXPECT_EQ(outcome->skipped, 1);
  EXPECT_EQ(outcome->preempted, 0);
  EXPECT_EQ(store.nodes[0].job, 20);
  EXPECT_EQ(store.nodes[1].job, 20);
  EXPECT_EQ(store.nodes[2].job, 10);  // from the view before the preemption: 2 and 3 free
  EXPECT_EQ(store.nodes[3].job, 0);
}

// Preemptions first, under a savepoint; then the holds' and the other admissions' moves in one
// batch and their compare-and-sets in one more; then failures, notices and verdicts.
TEST(CycleCommitTest, WritesPreemptionsThenHoldsAndAdmissionsThenFailuresThenVerdicts) {
  Fleet fleet = OnePoolFleet(4);
  AdmissionPlanner planner(fleet, /*simulated_startup=*/false);
  FakeWrites store;
  store.nodes = {{0, {NodeState::kBusy, 20}}, {1, Free()}, {2, Free()}, {3, Free()}};
  store.jobs[20] = JobSnapshot{20, 5, JobState::kRunning, true};
  CycleResult cycle;
  cycle.admissions = {Admission(9, 1, {20}), Admission(10, 1)};
  HoldDecision hold;
  hold.resource_uid = 77;
  hold.version = 1;
  hold.placement.zone = "us-central1-a";
  hold.placement.pools.push_back({0, 1, "", 0});
  cycle.holds = {hold};
  cycle.hold_failures = {HoldFailure{78, 1, "never fits"}};
  cycle.failures = {FailureDecision{30, 2, "never fits"}};
  cycle.notices = {PreemptionNotice{21, "stopping", "PREEMPTION_NOTICE"}};
  cycle.hold_verdicts = {HoldVerdict{79, Verdict{}}};
  cycle.verdicts = {VerdictUpdate{31, 1, Verdict{}, false}};
  auto outcome = CommitCycle(planner, cycle, kT0, store);
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_EQ(store.calls, (std::vector<std::string>{
                             "ReadFree", "Mark", "LockJob", "ApplyTransition", "ReadFree",
                             "MoveNodes", "Admit", "ReleaseMark", "MoveNodes", "Admit", "FailHolds",
                             "FailJobs", "WriteNotices", "WriteHoldVerdicts", "WriteVerdicts"}));
  ASSERT_EQ(store.batches.size(), 2u);
  EXPECT_EQ(store.batches[1].holds.size(), 1u);  // the hold's and the admission's, one batch
  EXPECT_EQ(store.batches[1].claims.size(), 1u);
  EXPECT_EQ(outcome->admitted, 3);
  EXPECT_EQ(outcome->preempted, 1);
  EXPECT_EQ(outcome->failed, 2);
  EXPECT_EQ(outcome->verdicts, 1);
}

}  // namespace
}  // namespace trainyard
