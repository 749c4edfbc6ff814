#include "services/scheduler/cycle_commit.h"

#include <unordered_map>
#include <utility>

namespace trainyard {
namespace {

// One hold's or admission's writes: its node moves, planned from the state each node was read
// in, and the resource's placement or the job's transition.
struct PlannedWrites {
  int64_t owner = 0;  // the admission's job, or the hold's resource
  std::vector<NodeMove> moves;
  bool whole = true;  // false: a chosen node has no such move from the state read (skipped)
  std::optional<HoldPlan> hold;
  std::optional<StateUpdate> update;
};

std::vector<NodeMove> MovesOf(const std::vector<NodeClaim>& claims, NodeEvent event, int64_t owner,
                              int64_t holder, const NodeStatesRead& states, bool& whole) {
  std::vector<NodeMove> out;
  for (const NodeClaim& claim : claims) {
    for (int64_t ordinal : claim.ordinals) {
      auto it = states.find({claim.pool_id, ordinal});
      std::optional<NodeMove> move =
          it == states.end() ? std::nullopt
                             : PlanNodeMove(claim.pool_id, ordinal, it->second, event, owner);
      if (!move) {
        whole = false;
        continue;
      }
      move->holder = holder;
      out.push_back(std::move(*move));
    }
  }
  return out;
}

PlannedWrites WritesOf(const JobAdmissionPlan& plan, const NodeStatesRead& states) {
  PlannedWrites w;
  w.owner = plan.job_id;
  w.moves =
      MovesOf(plan.claims, NodeEvent::kClaimed, plan.job_id, plan.resource_uid, states, w.whole);
  w.update = StateUpdate{plan.job_id, plan.version, plan.transition, {}, {}, plan.lease};
  return w;
}

PlannedWrites WritesOf(HoldPlan plan, const NodeStatesRead& states) {
  PlannedWrites w;
  w.owner = plan.resource_uid;
  // A hold takes the pools' own nodes (holder 0).
  w.moves = MovesOf(plan.claims, NodeEvent::kHeld, plan.resource_uid, 0, states, w.whole);
  w.hold = std::move(plan);
  return w;
}

std::unordered_map<int64_t, std::vector<NodeMove>> ByOwner(const std::vector<NodeMove>& moves) {
  std::unordered_map<int64_t, std::vector<NodeMove>> out;
  for (const NodeMove& m : moves) out[m.owner].push_back(m);
  return out;
}

// An admission that preempts: its victims requeued, then its own claim on the nodes as they
// left them, all under a savepoint so a victim that moved on or a short claim undoes only this
// admission. `cycle_reads`: the whole cycle's reads; the admission's pools are read again with
// them, since a read replaces what `free` held of a pool and the admissions after it there must
// still find theirs.
Status AdmitPreempting(const AdmissionPlanner& planner, const AdmissionDecision& a,
                       const std::vector<FreeNodesRead>& cycle_reads, Timestamp now,
                       CycleWrites& writes, FreeByPool& free, NodeStatesRead& states,
                       CommitOutcome& outcome) {
  TY_RETURN_IF_ERROR(writes.Mark());
  // What the rest of the commit sees as free goes back with the savepoint.
  const FreeByPool free_before = free;
  const NodeStatesRead states_before = states;
  auto skip = [&]() -> Status {
    ++outcome.skipped;
    free = free_before;
    states = states_before;
    return writes.RollbackToMark();
  };
  int preempted = 0;
  for (int64_t victim : a.victims) {
    TY_ASSIGN_OR_RETURN(std::optional<JobSnapshot> found, writes.LockJob(victim));
    if (!found) return skip();
    // A victim that moved on meanwhile (cancelled, finished) is no victim: the admission waits.
    std::optional<JobTransition> requeue = planner.PlanVictim(a, *found, now);
    if (!requeue) return skip();
    TY_ASSIGN_OR_RETURN(bool requeued,
                        writes.ApplyTransition(
                            StateUpdate{victim, found->version, std::move(*requeue), {}, {}, {}}));
    if (!requeued) return skip();
    ++preempted;
  }
  std::vector<FreeNodesRead> reads;
  for (const FreeNodesRead& read : cycle_reads) {
    for (const PlacedPool& pp : a.placement.pools) {
      if (pp.pool == read.pool) {
        reads.push_back(read);
        break;
      }
    }
  }
  if (!reads.empty()) TY_RETURN_IF_ERROR(writes.ReadFree(reads, free, states));
  std::optional<JobAdmissionPlan> plan = planner.PlanJob(a, now, free);
  if (!plan) return skip();
  PlannedWrites planned = WritesOf(*plan, states);
  if (!planned.whole) return skip();
  NodeMoveBatch claims;
  claims.claims = planned.moves;
  TY_ASSIGN_OR_RETURN(NodeMoveBatch claimed, writes.MoveNodes(claims, {&*planned.update}, now));
  // A node that moved since it was read (a failure, another writer) loses the race.
  if (claimed.claims.size() != planned.moves.size()) return skip();
  TY_ASSIGN_OR_RETURN(Admitted admitted, writes.Admit({}, {*planned.update}, now));
  if (!admitted.jobs.contains(a.job_id)) return skip();
  ++outcome.admitted;
  outcome.preempted += preempted;
  return writes.ReleaseMark();
}

// The holds and every other admission in two round trips: all node moves, then all
// compare-and-sets; one whose moves came back short or whose row moved gives its nodes back.
Status AdmitAll(const AdmissionPlanner& planner, const CycleResult& cycle, Timestamp now,
                CycleWrites& writes, FreeByPool& free, const NodeStatesRead& states,
                CommitOutcome& outcome) {
  std::vector<PlannedWrites> plans;
  auto add = [&](PlannedWrites planned) {
    if (planned.whole) {
      plans.push_back(std::move(planned));
    } else {
      ++outcome.skipped;
    }
  };
  for (const HoldDecision& h : cycle.holds) {
    if (std::optional<HoldPlan> plan = planner.PlanHold(h, now, free)) {
      add(WritesOf(std::move(*plan), states));
    } else {
      ++outcome.skipped;
    }
  }
  for (const AdmissionDecision& a : cycle.admissions) {
    if (!a.victims.empty()) continue;  // admitted already, one at a time
    if (std::optional<JobAdmissionPlan> plan = planner.PlanJob(a, now, free)) {
      add(WritesOf(*plan, states));
    } else {
      ++outcome.skipped;
    }
  }
  if (plans.empty()) return Status::Ok();
  NodeMoveBatch moves;
  std::vector<StateUpdate*> admitting;
  for (PlannedWrites& plan : plans) {
    std::vector<NodeMove>& into = plan.update ? moves.claims : moves.holds;
    into.insert(into.end(), plan.moves.begin(), plan.moves.end());
    if (plan.update) admitting.push_back(&*plan.update);
  }
  TY_ASSIGN_OR_RETURN(NodeMoveBatch moved, writes.MoveNodes(moves, admitting, now));
  const auto held_by = ByOwner(moved.holds);
  const auto claimed_by = ByOwner(moved.claims);
  auto applied_of = [&](const PlannedWrites& plan) -> const std::vector<NodeMove>* {
    const auto& by = plan.update ? claimed_by : held_by;
    auto it = by.find(plan.owner);
    return it == by.end() ? nullptr : &it->second;
  };
  std::vector<const PlannedWrites*> whole, undo;
  for (const PlannedWrites& plan : plans) {
    const std::vector<NodeMove>* applied = applied_of(plan);
    const size_t count = applied == nullptr ? 0 : applied->size();
    (count == plan.moves.size() ? whole : undo).push_back(&plan);
  }
  // Each a compare-and-set on its job's (or resource's) version: one cancelled meanwhile is not
  // admitted, and its nodes go back.
  std::vector<HoldPlan> holds;
  std::vector<StateUpdate> jobs;
  for (const PlannedWrites* plan : whole) {
    if (plan->update) {
      jobs.push_back(*plan->update);
    } else {
      holds.push_back(*plan->hold);
    }
  }
  Admitted admitted;
  if (!whole.empty()) {
    TY_ASSIGN_OR_RETURN(admitted, writes.Admit(holds, jobs, now));
  }
  for (const PlannedWrites* plan : whole) {
    const bool done = plan->update ? admitted.jobs.contains(plan->owner)
                                   : admitted.resources.contains(plan->owner);
    if (done) {
      ++outcome.admitted;
    } else {
      undo.push_back(plan);
    }
  }
  if (undo.empty()) return Status::Ok();
  outcome.skipped += static_cast<int>(undo.size());
  // What the skipped ones moved goes back, each node from the state its move left it in (the
  // rows are this transaction's now: no other writer can have moved them).
  NodeMoveBatch backs;
  for (const PlannedWrites* plan : undo) {
    const std::vector<NodeMove>* applied = applied_of(*plan);
    if (applied == nullptr) continue;
    for (const NodeMove& m : *applied) {
      std::optional<NodeMove> back =
          PlanNodeMove(m.pool_id, m.ordinal, m.to,
                       plan->update ? NodeEvent::kUnclaimed : NodeEvent::kUnheld, m.owner);
      if (!back) return Internal("no way back for a node claimed in this commit");
      (plan->update ? backs.unclaims : backs.unholds).push_back(std::move(*back));
    }
  }
  if (backs.empty()) return Status::Ok();
  TY_ASSIGN_OR_RETURN(NodeMoveBatch gone_back, writes.MoveNodes(backs, {}, now));
  if (gone_back.unclaims.size() + gone_back.unholds.size() !=
      backs.unclaims.size() + backs.unholds.size()) {
    return Internal("a node claimed in this commit moved before it was given back");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<CommitOutcome> CommitCycle(const AdmissionPlanner& planner, const CycleResult& cycle,
                                    Timestamp now, CycleWrites& writes) {
  CommitOutcome outcome;
  FreeByPool free;
  NodeStatesRead states;
  const std::vector<FreeNodesRead> reads = planner.FreeNodesToRead(cycle);
  if (!reads.empty()) TY_RETURN_IF_ERROR(writes.ReadFree(reads, free, states));
  // Preemptions first, one at a time (at most 64 a cycle), since they free nodes.
  for (const AdmissionDecision& a : cycle.admissions) {
    if (a.victims.empty()) continue;
    TY_RETURN_IF_ERROR(AdmitPreempting(planner, a, reads, now, writes, free, states, outcome));
  }
  TY_RETURN_IF_ERROR(AdmitAll(planner, cycle, now, writes, free, states, outcome));
  if (!cycle.hold_failures.empty()) {
    TY_ASSIGN_OR_RETURN(int failed, writes.FailHolds(cycle.hold_failures, now));
    outcome.failed += failed;
  }
  if (!cycle.failures.empty()) {
    std::vector<StateUpdate> failures;
    for (const FailureDecision& f : cycle.failures) {
      TY_ASSIGN_OR_RETURN(JobTransition transition, planner.PlanFailure(f, now));
      failures.push_back(StateUpdate{f.job_id, f.version, std::move(transition), {}, {}, {}});
    }
    TY_ASSIGN_OR_RETURN(int failed, writes.FailJobs(failures));
    outcome.failed += failed;
  }
  if (!cycle.notices.empty()) TY_RETURN_IF_ERROR(writes.WriteNotices(cycle.notices, now));
  if (!cycle.hold_verdicts.empty()) {
    TY_RETURN_IF_ERROR(writes.WriteHoldVerdicts(cycle.hold_verdicts));
  }
  if (!cycle.verdicts.empty()) {
    TY_ASSIGN_OR_RETURN(outcome.verdicts, writes.WriteVerdicts(cycle.verdicts, now));
  }
  return outcome;
}

}  // namespace trainyard
