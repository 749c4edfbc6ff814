#pragma once
// The fleet's side of persistent resources on PostgreSQL, on the scheduler leader's connection
// (like the failure simulator): losing the lead stops every write.
#include "services/persistent_resources/resource_fleet_store.h"
#include "storage/pg_scheduler_store.h"

namespace trainyard::storage {

class PgResourceFleetStore final : public ResourceFleetStore {
 public:
  explicit PgResourceFleetStore(PgSchedulerStore& leader) : leader_(leader) {}

  StatusOr<bool> MarkRunning(const ResourceRecord& record, Timestamp now) override;
  StatusOr<bool> StartReboot(const ResourceRecord& record, Timestamp ready_at, Timestamp now,
                             const std::vector<StateUpdate>& stops) override;
  StatusOr<std::vector<JobRecord>> JobsHoldingNodes(const ResourceRecord& record) override;
  StatusOr<bool> Resize(const ResourceRecord& record, const std::vector<PoolResize>& pools,
                        Timestamp ready_at, Timestamp now, std::string& why) override;
  Status ResizeWaits(const ResourceRecord& record, const std::string& code,
                     const std::string& why) override;
  StatusOr<bool> Autoscale(const ResourceRecord& record, const PersistentResource& resized,
                           Timestamp now) override;
  StatusOr<std::map<std::string, int64_t>> IdleNodes(const ResourceRecord& record,
                                                     Timestamp since) override;
  StatusOr<std::vector<JobRef>> JobsOn(const ResourceRecord& record) override;
  StatusOr<bool> Remove(const ResourceRecord& record, Timestamp now,
                        const std::optional<RpcStatus>& error) override;

 private:
  PgSchedulerStore& leader_;
};

}  // namespace trainyard::storage
