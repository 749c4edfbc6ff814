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
  explicit PgSchedulerStore(std::string conninfo) : conninfo_(std::move(conninfo)) {}

  StatusOr<bool> TryLead() override;
  StatusOr<Timestamp> SyncNodes(const Fleet& fleet, Timestamp now) override;
  StatusOr<std::vector<JobRecord>> JobChanges(int64_t after, int limit) override;
  StatusOr<std::map<std::string, int64_t>> UnitsDown(const Fleet& fleet) override;
  StatusOr<CommitOutcome> Commit(const Fleet& fleet, const CycleResult& cycle,
                                 Timestamp now) override;

 private:
  StatusOr<pg::Connection*> Connection();
  // The free units of `pools` (fleet pool indexes), read once per commit: see storage/free_units.h.
  using FreeByPool = std::map<int, FreeUnits>;
  Status LoadFree(pg::Transaction& tx, const Fleet& fleet, const std::set<int>& pools,
                  FreeByPool& free);
  Status Admit(pg::Transaction& tx, const Fleet& fleet, const AdmissionDecision& a, Timestamp now,
               FreeByPool& free, CommitOutcome& outcome);

  std::string conninfo_;
  std::unique_ptr<pg::Connection> conn_;  // holds the leader lock
  bool leading_ = false;
};

}  // namespace trainyard::storage
