#pragma once
// The failure simulator's store in memory: spot notices and reclaims, node failures and repairs,
// each applied with its job's transition exactly as storage/pg_failure_store.cpp applies them.
// Injections are an API's (none in a replay).
#include "services/fleet/failure_store.h"
#include "storage/memory/memory_database.h"

namespace trainyard::storage::memory {

class MemoryFailureStore final : public FailureStore {
 public:
  explicit MemoryFailureStore(MemoryDatabase& db) : db_(db) {}

  StatusOr<std::vector<FaultInjection>> PendingInjections(int) override {
    return std::vector<FaultInjection>{};
  }
  Status FinishInjection(const InjectionDone&, Timestamp) override { return Status::Ok(); }
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
  // Every node with `keep`, ordered by `key` then pool and ordinal.
  template <typename Keep, typename Key>
  std::vector<NodeStatus> Select(Keep keep, Key key);

  MemoryDatabase& db_;
};

}  // namespace trainyard::storage::memory
