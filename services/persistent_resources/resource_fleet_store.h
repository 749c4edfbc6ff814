#pragma once
// The fleet's side of persistent resources (workers/resource_reconciler): what only the
// scheduler's leader writes, on its own connection, so nothing races its node claims. Each call
// finishes the resource's operation in the transaction that finishes the work.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "services/persistent_resources/resource_repository.h"
#include "services/resource_names.h"

namespace trainyard {

class ResourceFleetStore {
 public:
  virtual ~ResourceFleetStore() = default;
  // Its nodes have booted: READY, the resource RUNNING (startTime at the first time), and its
  // operation done with the resource as response. false when the row moved on meanwhile.
  virtual StatusOr<bool> MarkRunning(const ResourceRecord& record, Timestamp now) = 0;
  // A reboot begins: every node boots again until `ready_at` (their caches survive). The jobs on
  // them take `stops` (reboot_policy.h): those that stop get their nodes back through the fleet's
  // repair path at `ready_at`, which resumes them; those that fail give them back at once. false
  // when anything moved meanwhile.
  virtual StatusOr<bool> StartReboot(const ResourceRecord& record, Timestamp ready_at,
                                     Timestamp now, const std::vector<StateUpdate>& stops) = 0;
  // The admitted jobs (PENDING, RUNNING) on the resource's nodes.
  virtual StatusOr<std::vector<JobRecord>> JobsHoldingNodes(const ResourceRecord& record) = 0;
  // A resize (UPDATING): each pool's held units move to `to_units` within its fleet pool, idle
  // nodes given back and free ones taken; the nodes taken boot until `ready_at`. Nothing changes
  // (false) when a pool cannot shrink yet (its nodes are busy) or cannot grow (too few free):
  // then `why` says so.
  struct PoolResize {
    std::string pool_id;  // the fleet pool the resource pool holds nodes in
    int64_t to_units = 0;
    int hosts_per_unit = 1;
    double price_per_node_hour = 0;
    // On an elastic pool (no node rows): its VMs' names before their number
    // (CapacityPool::ElasticVmPrefix); VMs are made and deleted, no node moves. Empty elsewhere.
    std::string elastic_vm_prefix = {};
  };
  virtual StatusOr<bool> Resize(const ResourceRecord& record, const std::vector<PoolResize>& pools,
                                Timestamp ready_at, Timestamp now, std::string& why) = 0;
  // A resize that cannot start yet says why on the resource (its trainyard.reason), as one
  // waiting for free nodes does; it stays UPDATING and is tried again each pass.
  virtual Status ResizeWaits(const ResourceRecord& record, const std::string& code,
                             const std::string& why) = 0;
  // Autoscaling: the resource (RUNNING) takes `resized` pool sizes and goes UPDATING, as a
  // client's resize does but without an operation.
  virtual StatusOr<bool> Autoscale(const ResourceRecord& record, const PersistentResource& resized,
                                   Timestamp now) = 0;
  // Per fleet pool: the resource's nodes idle (READY, no job) since `since` or longer.
  virtual StatusOr<std::map<std::string, int64_t>> IdleNodes(const ResourceRecord& record,
                                                             Timestamp since) = 0;
  // The jobs that name the resource and have not ended.
  virtual StatusOr<std::vector<JobRef>> JobsOn(const ResourceRecord& record) = 0;
  // Gives the nodes back and removes the resource, ending its operation with `error` or Empty;
  // false while a job still holds one of its nodes.
  virtual StatusOr<bool> Remove(const ResourceRecord& record, Timestamp now,
                                const std::optional<RpcStatus>& error) = 0;
};

}  // namespace trainyard
