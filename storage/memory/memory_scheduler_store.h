#pragma once
// The scheduler's store in memory: node slots, the job change feed and the cycle's commit, which
// runs the same CommitCycle as the PostgreSQL store over MemoryCycleWrites.
#include <set>

#include "services/scheduler/scheduler_store.h"
#include "storage/memory/memory_database.h"

namespace trainyard::storage::memory {

class MemorySchedulerStore final : public SchedulerStore {
 public:
  explicit MemorySchedulerStore(MemoryDatabase& db) : db_(db) {}

  StatusOr<bool> TryLead() override { return true; }
  Status Resign() override { return Status::Ok(); }
  StatusOr<Timestamp> SyncNodes(const Fleet& fleet, Timestamp now) override;
  StatusOr<std::vector<JobRecord>> JobChanges(const ChangeCursor& after, int limit) override;
  StatusOr<LiveJobs> ReadLiveJobs() override;
  StatusOr<UnitsDownView> UnitsDown(const Fleet& fleet) override;
  StatusOr<std::vector<ResourceStamp>> ResourceStamps() override;
  StatusOr<std::vector<ResourceRecord>> ResourcesByUid(const std::vector<int64_t>& uids) override;
  StatusOr<CommitOutcome> Commit(const AdmissionPlanner& planner, const CycleResult& cycle,
                                 Timestamp now) override;

 private:
  MemoryDatabase& db_;
};

}  // namespace trainyard::storage::memory
