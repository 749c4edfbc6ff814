#pragma once
// The scheduler's store in memory: node slots, the job change feed and the cycle's commit, which
// applies what services/scheduler/admission_planner.h plans exactly as the PostgreSQL store does
// (claims, victims' requeues, persistent resources' holds, failures, verdicts).
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
  // With the lock held: the free units of `pools` by holder (services/scheduler/free_units.h),
  // counting the nodes of the jobs in `releasing` as their holders would leave them.
  void LoadFreeLocked(const Fleet& fleet, const std::vector<int>& pools, FreeByPool& free,
                      const std::set<int64_t>& releasing = {});
  // Whether every claimed node is still free and held by `holder` (a resource's uid; 0: the
  // pool's own).
  bool AllFreeLocked(const std::vector<NodeClaim>& claims, int64_t holder);
  // The plan's claims, if every chosen node is still free; then its transition.
  bool ApplyPlanLocked(const JobAdmissionPlan& plan, Timestamp now);
  // A resource's hold, if every chosen node is still free and the resource still PROVISIONING at
  // the planned version; then its placement.
  bool ApplyHoldLocked(const HoldPlan& plan, Timestamp now);
  // A resource that can never be placed: ERROR, and its operation ends with the same error.
  void FailHoldLocked(const HoldFailure& f, Timestamp now);

  MemoryDatabase& db_;
};

}  // namespace trainyard::storage::memory
