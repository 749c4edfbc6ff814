#pragma once
// Persistent resources and operations in memory (storage/memory/memory_database.h): the API's
// repositories and the fleet's side, applying what the PostgreSQL stores apply
// (storage/pg_resource_store.cpp, storage/pg_resource_fleet_store.cpp,
// storage/pg_operation_store.cpp), each call whole or not at all, under the database's lock.
#include "services/operations/operation_repository.h"
#include "services/persistent_resources/resource_fleet_store.h"
#include "services/persistent_resources/resource_repository.h"
#include "storage/memory/memory_database.h"

namespace trainyard::storage::memory {

class MemoryResourceStore final : public ResourceRepository, public ResourceFleetStore {
 public:
  explicit MemoryResourceStore(MemoryDatabase& db) : db_(db) {}

  Status Insert(const ResourceChange& change) override;
  StatusOr<ResourceRecord> Get(int64_t project_number, const std::string& location,
                               const std::string& resource_id) override;
  StatusOr<std::vector<ResourceRecord>> List(const ListResourcesQuery& query) override;
  StatusOr<std::optional<Operation>> Update(const ResourceChange& change) override;

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
  // With the lock held: the resource at `record`'s version (nullptr when it moved on or went).
  MemoryResource* AtVersionLocked(const ResourceRecord& record);
  // Records the change's operation, and ends the one it supersedes (ABORTED).
  void RecordOperationLocked(const ResourceChange& change);

  MemoryDatabase& db_;
};

class MemoryOperationStore final : public OperationRepository {
 public:
  explicit MemoryOperationStore(MemoryDatabase& db) : db_(db) {}

  StatusOr<Operation> Get(int64_t project_number, const std::string& location, int64_t id) override;
  StatusOr<std::vector<Operation>> List(const ListOperationsQuery& query) override;
  Status RequestCancel(int64_t project_number, const std::string& location, int64_t id,
                       Timestamp now) override;
  Status Delete(int64_t project_number, const std::string& location, int64_t id) override;

 private:
  // With the lock held: the operation of that project and location (nullptr: none).
  Operation* FindLocked(int64_t project_number, const std::string& location, int64_t id);

  MemoryDatabase& db_;
};

}  // namespace trainyard::storage::memory
