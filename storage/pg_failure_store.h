#pragma once
// The failure simulator's storage on PostgreSQL, on the scheduler leader's own connection: losing
// the lead (or the connection) stops every write, so only one process ever simulates failures.
#include "services/fleet/failure_store.h"
#include "storage/pg_scheduler_store.h"

namespace trainyard::storage {

class PgFailureStore final : public FailureStore {
 public:
  explicit PgFailureStore(PgSchedulerStore& leader) : leader_(leader) {}

  StatusOr<std::vector<FaultInjection>> PendingInjections(int limit) override;
  Status FinishInjection(const InjectionDone& done, Timestamp now) override;
  StatusOr<std::vector<NodeStatus>> LiveNodes(const std::vector<std::string>& pool_ids) override;
  StatusOr<NodeStatus> Node(const NodeRef& node) override;
  StatusOr<std::vector<NodeStatus>> NoticesDue(Timestamp now) override;
  StatusOr<std::vector<NodeStatus>> RepairsDue(Timestamp now) override;
  StatusOr<std::map<int64_t, JobRecord>> Jobs(const std::vector<int64_t>& ids) override;
  StatusOr<std::optional<int64_t>> HazardTick() override;
  Status GiveNotices(const std::vector<SpotNotice>& notices, Timestamp now,
                     std::optional<int64_t> hazard_tick,
                     const std::optional<InjectionDone>& injection) override;
  StatusOr<bool> ReclaimNode(const Reclaim& reclaim) override;
  StatusOr<bool> FailNode(const NodeFailure& failure) override;
  Status StartRepairs(Timestamp now) override;
  StatusOr<bool> FinishRepair(const Repair& repair) override;
  Status GiveBackPreempted(Timestamp now) override;

 private:
  PgSchedulerStore& leader_;
};

}  // namespace trainyard::storage
