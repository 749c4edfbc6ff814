#include "services/persistent_resources/resource_validator.h"

#include <set>

#include "services/jobs/field_rules.h"

namespace trainyard {
namespace {

constexpr size_t kMaxDisplayNameChars = 128;
constexpr size_t kMaxPools = 16;
constexpr int64_t kMaxReplicas = 1000;  // as for job pools: a typo must not tie up the fleet

// "a3-highgpu-8g-nvidia-h100-80gb": Vertex names an unnamed pool after its machine.
std::string DefaultPoolId(const ResourcePool& pool, size_t index,
                          const std::set<std::string>& taken) {
  std::string base = pool.machine_spec.machine_type;
  for (char& c : base) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) c = '-';
  }
  if (base.empty() || base.front() < 'a' || base.front() > 'z') base = "pool-" + base;
  if (base.size() > 50) base.resize(50);
  std::string id = base;
  for (size_t n = index; taken.count(id) > 0; ++n) id = base + "-" + std::to_string(n);
  return id;
}

Status ValidatePool(ResourcePool& pool, size_t index) {
  const std::string path = "resourcePools[" + std::to_string(index) + "]";
  TY_RETURN_IF_ERROR(ValidateMachineSpecField(pool.machine_spec, path + ".machineSpec"));
  if (pool.machine_spec.reservation_affinity) {
    return InvalidField(path + ".machineSpec.reservationAffinity",
                        "a persistent resource takes its project's reservations first on its own; "
                        "reservationAffinity is not supported on its pools");
  }
  if (pool.disk_spec)
    TY_RETURN_IF_ERROR(ValidateDiskSpecField(*pool.disk_spec, path + ".diskSpec"));
  if (pool.autoscaling_spec) {
    const ResourceAutoscaling& a = *pool.autoscaling_spec;
    if (a.min_replica_count <= 0) {
      return InvalidField(path + ".autoscalingSpec.minReplicaCount",
                          "minReplicaCount must be greater than 0 (got " +
                              std::to_string(a.min_replica_count) + ")");
    }
    if (a.max_replica_count != 0 && a.max_replica_count < a.min_replica_count) {
      return InvalidField(path + ".autoscalingSpec.maxReplicaCount",
                          "maxReplicaCount must be at least minReplicaCount (" +
                              std::to_string(a.min_replica_count) + "); got " +
                              std::to_string(a.max_replica_count));
    }
    // An autoscaled pool starts at its minimum unless the client says otherwise.
    if (pool.replica_count == 0) pool.replica_count = a.min_replica_count;
    if (pool.replica_count < a.min_replica_count ||
        (a.max_replica_count != 0 && pool.replica_count > a.max_replica_count)) {
      return InvalidField(path + ".replicaCount",
                          "replicaCount must lie between the pool's minReplicaCount and "
                          "maxReplicaCount (got " +
                              std::to_string(pool.replica_count) + ")");
    }
  }
  if (pool.replica_count <= 0) {
    return InvalidField(path + ".replicaCount", "replicaCount must be at least 1 (got " +
                                                    std::to_string(pool.replica_count) + ")");
  }
  const int64_t most = pool.autoscaling_spec && pool.autoscaling_spec->max_replica_count > 0
                           ? pool.autoscaling_spec->max_replica_count
                           : pool.replica_count;
  if (most > kMaxReplicas) {
    return InvalidField(path + ".replicaCount",
                        "a pool holds at most 1000 replicas (got " + std::to_string(most) + ")");
  }
  if (!pool.id.empty() && !IsResourceIdText(pool.id)) {
    return InvalidField(path + ".id",
                        "a pool id is 1-63 characters: a lowercase letter, then lowercase letters, "
                        "digits or '-', not ending in '-' (got \"" +
                            pool.id + "\")");
  }
  return Status::Ok();
}

}  // namespace

Status ValidatePersistentResourceId(const std::string& id) {
  if (id.empty()) {
    return InvalidField("persistentResourceId",
                        "persistentResourceId is required (?persistentResourceId=my-resource)");
  }
  if (!IsResourceIdText(id)) {
    return InvalidField(
        "persistentResourceId",
        "persistentResourceId must match [a-z]([a-z0-9-]{0,61}[a-z0-9])? (got \"" + id + "\")");
  }
  return Status::Ok();
}

Status ValidatePersistentResource(PersistentResource& resource) {
  if (resource.display_name.size() > kMaxDisplayNameChars) {
    return InvalidField("displayName", "displayName must be at most 128 characters");
  }
  TY_RETURN_IF_ERROR(ValidateLabelsField(resource.labels));
  if (resource.has_ray_spec) {
    return InvalidField("resourceRuntimeSpec.raySpec",
                        "Ray on persistent resources is not supported by Trainyard: leave out "
                        "resourceRuntimeSpec.raySpec and run the workload as custom jobs");
  }
  if (resource.resource_pools.empty()) {
    return InvalidField("resourcePools", "resourcePools is required: at least one pool");
  }
  if (resource.resource_pools.size() > kMaxPools) {
    return InvalidField("resourcePools", "a persistent resource has at most 16 pools");
  }
  std::set<std::string> ids;
  for (size_t i = 0; i < resource.resource_pools.size(); ++i) {
    TY_RETURN_IF_ERROR(ValidatePool(resource.resource_pools[i], i));
    if (!resource.resource_pools[i].id.empty() &&
        !ids.insert(resource.resource_pools[i].id).second) {
      return InvalidField(
          "resourcePools[" + std::to_string(i) + "].id",
          "pool ids must be unique; \"" + resource.resource_pools[i].id + "\" is used twice");
    }
  }
  for (size_t i = 0; i < resource.resource_pools.size(); ++i) {
    ResourcePool& pool = resource.resource_pools[i];
    if (pool.id.empty()) ids.insert(pool.id = DefaultPoolId(pool, i, ids));
  }
  return Status::Ok();
}

}  // namespace trainyard
