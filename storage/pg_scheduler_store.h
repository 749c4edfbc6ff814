#pragma once
// The scheduler's storage on PostgreSQL: nodes, the job change feed and the cycle commit.
#include <map>
#include <memory>
#include <set>

#include "services/scheduler/scheduler_store.h"
#include "storage/free_units.h"
#include "storage/pg.h"

namespace trainyard::storage {

class PgSchedulerStore final : public SchedulerStore {
 public:
  // simulated_startup: admitted jobs wait out the fleet's simulated boot and image pull before
  // the runtime looks at them (the simulator); off for runtimes that start real processes, which
  // report their own readiness.
  explicit PgSchedulerStore(std::string conninfo, bool simulated_startup = true)
      : conninfo_(std::move(conninfo)), simulated_startup_(simulated_startup) {}

  StatusOr<bool> TryLead() override;
  Status Resign() override;
  StatusOr<Timestamp> SyncNodes(const Fleet& fleet, Timestamp now) override;
  StatusOr<std::vector<JobRecord>> JobChanges(const ChangeCursor& after, int limit) override;
  StatusOr<UnitsDownView> UnitsDown(const Fleet& fleet) override;
  StatusOr<std::vector<ResourceStamp>> ResourceStamps() override;
  StatusOr<std::vector<ResourceRecord>> ResourcesByUid(const std::vector<int64_t>& uids) override;
  StatusOr<CommitOutcome> Commit(const Fleet& fleet, const CycleResult& cycle,
                                 Timestamp now) override;

  // The connection that holds the leader lock, for other leader-only work (the failure
  // simulator): ABORTED unless this process leads.
  StatusOr<pg::Connection*> LeaderConnection();

 private:
  StatusOr<pg::Connection*> Connection();
  // The free units of `pools` (fleet pool indexes), read once per commit: see storage/free_units.h.
  // Keyed by (pool, the persistent resource that holds the nodes, 0 for none).
  using FreeByPool = std::map<std::pair<int, int64_t>, FreeUnits>;
  Status LoadFree(pg::Transaction& tx, const Fleet& fleet, const std::set<int>& pools,
                  FreeByPool& free);
  // An admission that preempts: its victims requeued and their nodes freed, then its own claims,
  // all under a savepoint so a short claim undoes only this admission.
  // Requeues one victim of a preemption, locked and compare-and-set as it is now; false when it
  // is no longer a PENDING or RUNNING job.
  StatusOr<bool> RequeueVictim(pg::Transaction& tx, int64_t victim, int64_t preemptor,
                               PreemptionCause cause, Timestamp now);
  Status AdmitPreempting(pg::Transaction& tx, const Fleet& fleet, const AdmissionDecision& a,
                         Timestamp now, FreeByPool& free, CommitOutcome& outcome);
  // Every other admission in two round trips: all node claims, then all job compare-and-sets;
  // an admission whose claim came back short or whose job moved gives its nodes back.
  Status AdmitAll(pg::Transaction& tx, const Fleet& fleet,
                  const std::vector<const AdmissionDecision*>& admissions, Timestamp now,
                  FreeByPool& free, CommitOutcome& outcome);

  std::string conninfo_;
  bool simulated_startup_ = true;
  std::unique_ptr<pg::Connection> conn_;  // holds the leader lock
  bool leading_ = false;
};

}  // namespace trainyard::storage
