#pragma once
// The PersistentResource resource as the domain sees it (google.cloud.aiplatform.v1
// .PersistentResource): pools of machines a project keeps for its jobs, plain values.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "services/model/custom_job.h"

namespace trainyard {

enum class ResourceState : int {
  kUnspecified = 0,
  kProvisioning = 1,
  kRunning = 3,
  kStopping = 4,
  kError = 5,
  kRebooting = 6,
  kUpdating = 7,
};

struct ResourceStateSpelling {
  std::string_view name;  // "RUNNING"
  ResourceState state;
};

// The one spelling of every state, the proto's, in proto order: the wire's enum table
// (api/wire/enums) and the domain's messages read this list.
inline constexpr std::array<ResourceStateSpelling, 7> kResourceStateSpellings = {{
    {"STATE_UNSPECIFIED", ResourceState::kUnspecified},
    {"PROVISIONING", ResourceState::kProvisioning},
    {"RUNNING", ResourceState::kRunning},
    {"STOPPING", ResourceState::kStopping},
    {"ERROR", ResourceState::kError},
    {"REBOOTING", ResourceState::kRebooting},
    {"UPDATING", ResourceState::kUpdating},
}};

// "RUNNING", for messages written by the domain.
constexpr std::string_view ResourceStateText(ResourceState state) {
  for (const ResourceStateSpelling& s : kResourceStateSpellings) {
    if (s.state == state) return s.name;
  }
  return "STATE_UNSPECIFIED";
}

struct ResourceAutoscaling {
  int64_t min_replica_count = 0;
  int64_t max_replica_count = 0;
};

struct ResourcePool {
  std::string id;  // generated when the client leaves it out
  MachineSpec machine_spec;
  int64_t replica_count = 0;
  std::optional<DiskSpec> disk_spec;
  std::optional<ResourceAutoscaling> autoscaling_spec;
  int64_t used_replica_count = 0;  // output only: replicas jobs occupy now
};

struct ServiceAccountSpec {
  bool enable_custom_service_account = false;
  std::string service_account;
};

// Where the resource's nodes are and why it is not RUNNING yet: Trainyard's output-only
// `trainyard` object, as on jobs.
struct ResourceFleetStatus {
  std::string reason_code;
  std::string reason_message;
  std::string zone;
  std::vector<PlacedPoolStatus> pools;  // in resource-pool order
  double hourly_price_usd = 0;
};

struct PersistentResource {
  std::string name;  // projects/{number}/locations/{location}/persistentResources/{id}
  std::string display_name;
  std::vector<ResourcePool> resource_pools;
  ResourceState state = ResourceState::kUnspecified;
  std::optional<RpcStatus> error;
  std::optional<Timestamp> create_time;
  std::optional<Timestamp> start_time;
  std::optional<Timestamp> update_time;
  std::map<std::string, std::string> labels;
  std::string network;
  std::vector<std::string> reserved_ip_ranges;
  std::optional<EncryptionSpec> encryption_spec;
  std::optional<ServiceAccountSpec> service_account_spec;  // resourceRuntimeSpec
  bool has_ray_spec = false;  // resourceRuntimeSpec.raySpec: refused, there is no Ray here
  std::optional<ResourceFleetStatus> trainyard;  // output only
};

// The resource as it holds nodes now: each pool's replicaCount is the units placed for it (a
// resize or autoscaling changes the spec first and the nodes after). Quota counts this.
inline PersistentResource AsHeld(const PersistentResource& resource) {
  PersistentResource held = resource;
  if (!held.trainyard) return held;
  for (size_t i = 0; i < held.resource_pools.size() && i < held.trainyard->pools.size(); ++i) {
    held.resource_pools[i].replica_count = held.trainyard->pools[i].units;
  }
  return held;
}

}  // namespace trainyard
