#pragma once
// The scheduler's storage on PostgreSQL: nodes, the job change feed and the cycle commit.
#include <map>
#include <memory>
#include <set>

#include "services/scheduler/admission_planner.h"
#include "services/scheduler/scheduler_store.h"
#include "storage/node_moves.h"
#include "storage/pg.h"

namespace trainyard::storage {

class PgSchedulerStore final : public SchedulerStore {
 public:
  // Its own session on `conninfo` (it holds the leader lock), set up with `session`.
  explicit PgSchedulerStore(std::string conninfo, pg::SessionOptions session = {})
      : conninfo_(std::move(conninfo)), session_(std::move(session)) {}

  StatusOr<bool> TryLead() override;
  Status Resign() override;
  StatusOr<Timestamp> SyncNodes(const Fleet& fleet, Timestamp now) override;
  StatusOr<std::vector<JobRecord>> JobChanges(const ChangeCursor& after, int limit) override;
  StatusOr<LiveJobs> ReadLiveJobs() override;
  StatusOr<UnitsDownView> UnitsDown(const Fleet& fleet) override;
  StatusOr<std::vector<ResourceStamp>> ResourceStamps() override;
  StatusOr<std::vector<ResourceRecord>> ResourcesByUid(const std::vector<int64_t>& uids) override;
  StatusOr<CommitOutcome> Commit(const AdmissionPlanner& planner, const CycleResult& cycle,
                                 Timestamp now) override;

  // The connection that holds the leader lock, for other leader-only work (the failure
  // simulator): ABORTED unless this process leads.
  StatusOr<pg::Connection*> LeaderConnection();

 private:
  StatusOr<pg::Connection*> Connection();
  // The free units of `pools` (fleet pool indexes, none elastic), read once per commit: see
  // services/scheduler/free_units.h. `states`: each free node's state as read, which its claim
  // moves from (storage/node_moves.h).
  Status LoadFree(pg::Transaction& tx, const Fleet& fleet, const std::vector<FreeNodesRead>& reads,
                  FreeByPool& free, NodeStatesRead& states);
  // An admission that preempts: its victims requeued and their nodes freed, then its own claims,
  // all under a savepoint so a short claim undoes only this admission.
  // Requeues one victim of a preemption, locked and compare-and-set as it is now; false when it
  // is no longer a PENDING or RUNNING job.
  StatusOr<bool> RequeueVictim(pg::Transaction& tx, const AdmissionPlanner& planner,
                               const AdmissionDecision& a, int64_t victim, Timestamp now);
  // `cycle_reads`: the whole cycle's free-node reads; the admission's pools are read again with
  // them once its victims are gone, so the admissions after it in those pools still find theirs.
  Status AdmitPreempting(pg::Transaction& tx, const AdmissionPlanner& planner,
                         const AdmissionDecision& a, const std::vector<FreeNodesRead>& cycle_reads,
                         Timestamp now, FreeByPool& free, NodeStatesRead& states,
                         CommitOutcome& outcome);
  // The holds and every other admission in two round trips: all node claims, then all
  // compare-and-sets; one whose claim came back short or whose row moved gives its nodes back.
  Status AdmitAll(pg::Transaction& tx, const AdmissionPlanner& planner, const CycleResult& cycle,
                  Timestamp now, FreeByPool& free, const NodeStatesRead& states,
                  CommitOutcome& outcome);

  std::string conninfo_;
  pg::SessionOptions session_;
  std::unique_ptr<pg::Connection> conn_;  // holds the leader lock
  bool leading_ = false;
};

}  // namespace trainyard::storage
