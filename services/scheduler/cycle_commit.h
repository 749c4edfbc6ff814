#pragma once
// A cycle's commit, decided once for every store: the order of its writes, which decisions are
// skipped because what they were planned on moved, and what a skipped one gives back. A store
// only applies the writes it is handed as compare-and-sets (CycleWrites) and says which lost.
#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "services/fleet/node_move.h"
#include "services/jobs/job_repository.h"
#include "services/jobs/job_state_machine.h"
#include "services/scheduler/admission_planner.h"
#include "services/scheduler/scheduler.h"

namespace trainyard {

struct CommitOutcome {
  int admitted = 0;
  int skipped = 0;  // decisions whose job moved on since the cycle read it
  int preempted = 0;
  int failed = 0;
  int verdicts = 0;
};

// Node moves by what they write besides the state. Batch-shaped so a store applies them all in
// one round trip; each is a compare-and-set on the state its node was read in.
struct NodeMoveBatch {
  std::vector<NodeMove> holds;     // to the resource `owner`, from the pools' own
  std::vector<NodeMove> claims;    // to the job `owner`, from `holder`'s nodes
  std::vector<NodeMove> unclaims;  // back from the job `owner`, which took them in this commit
  std::vector<NodeMove> unholds;   // back from the resource `owner`, likewise
  bool empty() const {
    return holds.empty() && claims.empty() && unclaims.empty() && unholds.empty();
  }
};

// What admissions applied: the resources placed and the jobs admitted.
struct Admitted {
  std::set<int64_t> resources;
  std::set<int64_t> jobs;
};

// The primitive writes of one commit, all inside its transaction. Never called with nothing to
// write. A write whose row moved on is not applied and not an error: it is reported.
class CycleWrites {
 public:
  virtual ~CycleWrites() = default;
  // The free nodes `reads` name, as they are now. A read replaces what `free` held of its pool
  // and holder (lowest 0: of every holder in the pool, the pool's own included, even with none
  // free); `states` gets each node's state as read, which its move is a compare-and-set on.
  virtual Status ReadFree(const std::vector<FreeNodesRead>& reads, FreeByPool& free,
                          NodeStatesRead& states) = 0;
  // A savepoint: every write after Mark goes back with RollbackToMark, or stays with ReleaseMark.
  virtual Status Mark() = 0;
  virtual Status RollbackToMark() = 0;
  virtual Status ReleaseMark() = 0;
  // A job as it is now, locked to the end of the commit; nullopt when there is none.
  virtual StatusOr<std::optional<JobSnapshot>> LockJob(int64_t id) = 0;
  // One transition, its nodes following the job (a victim's requeue): whether it applied.
  virtual StatusOr<bool> ApplyTransition(const StateUpdate& update) = 0;
  // Applies `moves`, returning those that found their node as read. `admitting`: the admissions'
  // transitions to come, whose rows a store that computes writes from them reads in the same
  // round trip (it may fill their basis).
  virtual StatusOr<NodeMoveBatch> MoveNodes(const NodeMoveBatch& moves,
                                            const std::vector<StateUpdate*>& admitting,
                                            Timestamp now) = 0;
  // The holds' placements (each on its resource's version, while PROVISIONING) and the jobs'
  // admissions (each on its version), in one round trip.
  virtual StatusOr<Admitted> Admit(const std::vector<HoldPlan>& holds,
                                   const std::vector<StateUpdate>& jobs, Timestamp now) = 0;
  // Resources that can never be placed: ERROR, their operation failed alike. How many were.
  virtual StatusOr<int> FailHolds(const std::vector<HoldFailure>& failures, Timestamp now) = 0;
  // Jobs that can never run: how many of these transitions applied.
  virtual StatusOr<int> FailJobs(std::vector<StateUpdate>& failures) = 0;
  // Notes, not transitions (the version stays): to victims still PENDING or RUNNING, to
  // resources PROVISIONING and not placed, to jobs QUEUED (how many of these).
  virtual Status WriteNotices(const std::vector<PreemptionNotice>& notices, Timestamp now) = 0;
  virtual Status WriteHoldVerdicts(const std::vector<HoldVerdict>& verdicts) = 0;
  virtual StatusOr<int> WriteVerdicts(const std::vector<VerdictUpdate>& verdicts,
                                      Timestamp now) = 0;
};

// Commits `cycle` through `writes`: preemptions first, one at a time under a savepoint (they free
// nodes); then the holds' and the other admissions' node moves in one batch and their
// compare-and-sets in another, a loser's moves given back; then hold failures, failures, notices,
// hold verdicts and verdicts. A decision whose job, resource or nodes moved on is skipped.
StatusOr<CommitOutcome> CommitCycle(const AdmissionPlanner& planner, const CycleResult& cycle,
                                    Timestamp now, CycleWrites& writes);

}  // namespace trainyard
