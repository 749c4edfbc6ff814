#pragma once
// The scheduler's storage on PostgreSQL: nodes, the job change feed and the cycle commit.
#include <map>
#include <memory>
#include <set>

#include "services/scheduler/admission_planner.h"
#include "services/scheduler/scheduler_store.h"
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
  std::string conninfo_;
  pg::SessionOptions session_;
  std::unique_ptr<pg::Connection> conn_;  // holds the leader lock
  bool leading_ = false;
};

}  // namespace trainyard::storage
