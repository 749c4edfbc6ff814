#include "api/wire/persistent_resource_codec.h"

#include <exception>

#include "api/wire/enums.h"
#include "api/wire/json_reader.h"

namespace trainyard {
namespace {

using nlohmann::json;

constexpr char kRoot[] = "persistent_resource";
constexpr std::string_view kResourcePoolType = "google.cloud.aiplatform.v1.ResourcePool";
constexpr std::string_view kMachineSpecType = "google.cloud.aiplatform.v1.MachineSpec";
constexpr std::string_view kDiskSpecType = "google.cloud.aiplatform.v1.DiskSpec";
constexpr std::string_view kAutoscalingSpecType =
    "google.cloud.aiplatform.v1.ResourcePool.AutoscalingSpec";
constexpr std::string_view kRuntimeSpecType = "google.cloud.aiplatform.v1.ResourceRuntimeSpec";
constexpr std::string_view kServiceAccountSpecType =
    "google.cloud.aiplatform.v1.ServiceAccountSpec";
constexpr std::string_view kEncryptionSpecType = "google.cloud.aiplatform.v1.EncryptionSpec";
constexpr std::string_view kRpcStatusType = "google.rpc.Status";
constexpr std::string_view kResourceRuntimeType = "google.cloud.aiplatform.v1.ResourceRuntime";

void ReadPool(ObjectReader& r, ResourcePool* pool, ApiVersion version) {
  r.GetString("id", &pool->id);
  r.GetObject("machineSpec", kMachineSpecType,
              [&](ObjectReader& m) { ReadMachineSpecMessage(m, &pool->machine_spec, version); });
  r.GetInt64("replicaCount", &pool->replica_count);
  r.GetObject("diskSpec", kDiskSpecType,
              [&](ObjectReader& d) { ReadDiskSpecMessage(d, &pool->disk_spec.emplace()); });
  r.GetObject("autoscalingSpec", kAutoscalingSpecType, [&](ObjectReader& a) {
    ResourceAutoscaling& spec = pool->autoscaling_spec.emplace();
    a.GetInt64("minReplicaCount", &spec.min_replica_count);
    a.GetInt64("maxReplicaCount", &spec.max_replica_count);
  });
  r.GetInt64("usedReplicaCount", &pool->used_replica_count);
}

void ReadRuntimeSpec(ObjectReader& r, PersistentResource* resource) {
  r.GetObject("serviceAccountSpec", kServiceAccountSpecType, [&](ObjectReader& s) {
    ServiceAccountSpec& spec = resource->service_account_spec.emplace();
    s.GetBool("enableCustomServiceAccount", &spec.enable_custom_service_account);
    s.GetString("serviceAccount", &spec.service_account);
  });
  // Ray clusters are not something Trainyard runs: remembered, so validation refuses it by name.
  if (r.Skip("raySpec")) resource->has_ray_spec = true;
}

void ReadResource(ObjectReader& r, PersistentResource* resource, OutputOnlyFields output_only,
                  ApiVersion version) {
  r.GetString("name", &resource->name);
  r.GetString("displayName", &resource->display_name);
  r.GetObjectList("resourcePools", kResourcePoolType, [&](ObjectReader& p, size_t) {
    ReadPool(p, &resource->resource_pools.emplace_back(), version);
  });
  r.GetEnum("state", ResourceStateTable(), &resource->state);
  r.GetObject("error", kRpcStatusType, [&](ObjectReader& e) {
    RpcStatus& status = resource->error.emplace();
    e.GetInt32("code", &status.code);
    e.GetString("message", &status.message);
    e.Skip("details");
  });
  r.GetTimestamp("createTime", &resource->create_time);
  r.GetTimestamp("startTime", &resource->start_time);
  r.GetTimestamp("updateTime", &resource->update_time);
  r.GetStringMap("labels", &resource->labels);
  r.GetString("network", &resource->network);
  r.GetStringList("reservedIpRanges", &resource->reserved_ip_ranges);
  r.GetObject("encryptionSpec", kEncryptionSpecType, [&](ObjectReader& e) {
    ReadEncryptionSpecMessage(e, &resource->encryption_spec.emplace());
  });
  r.GetObject("resourceRuntimeSpec", kRuntimeSpecType,
              [&](ObjectReader& s) { ReadRuntimeSpec(s, resource); });
  // Output-only fields with no place in the model: type-checked, then dropped.
  r.GetObject("resourceRuntime", kResourceRuntimeType,
              [](ObjectReader& rt) { rt.Skip("accessUris"); });
  bool reserved = false;
  r.GetBool("satisfiesPzs", &reserved);
  r.GetBool("satisfiesPzi", &reserved);
  r.Skip("trainyard");
  if (output_only == OutputOnlyFields::kIgnore) {
    resource->name.clear();
    resource->state = ResourceState::kUnspecified;
    resource->error.reset();
    resource->create_time.reset();
    resource->start_time.reset();
    resource->update_time.reset();
    for (ResourcePool& pool : resource->resource_pools) pool.used_replica_count = 0;
  }
}

void PutString(json& out, const char* key, const std::string& value) {
  if (!value.empty()) out[key] = value;
}

json EncodePool(const ResourcePool& pool, ApiVersion version) {
  json out = json::object();
  PutString(out, "id", pool.id);
  out["machineSpec"] = EncodeMachineSpecMessage(pool.machine_spec, version);
  out["replicaCount"] = std::to_string(pool.replica_count);
  if (pool.disk_spec) out["diskSpec"] = EncodeDiskSpecMessage(*pool.disk_spec);
  if (pool.autoscaling_spec) {
    json a = json::object();
    if (pool.autoscaling_spec->min_replica_count != 0) {
      a["minReplicaCount"] = std::to_string(pool.autoscaling_spec->min_replica_count);
    }
    if (pool.autoscaling_spec->max_replica_count != 0) {
      a["maxReplicaCount"] = std::to_string(pool.autoscaling_spec->max_replica_count);
    }
    out["autoscalingSpec"] = std::move(a);
  }
  if (pool.used_replica_count != 0) {
    out["usedReplicaCount"] = std::to_string(pool.used_replica_count);
  }
  return out;
}

json EncodeFleetStatus(const ResourceFleetStatus& s) {
  json out = json::object();
  if (!s.reason_code.empty()) {
    out["reason"] = {{"code", s.reason_code}, {"message", s.reason_message}};
  }
  if (!s.zone.empty()) out["placement"] = EncodePlacementStatus(s.zone, s.pools);
  out["hourlyPriceUsd"] = s.hourly_price_usd;
  return out;
}

}  // namespace

StatusOr<PersistentResource> DecodePersistentResource(const nlohmann::json& body,
                                                      OutputOnlyFields output_only,
                                                      UnknownFields unknown, ApiVersion version) {
  try {
    ObjectReader reader(body, FieldPath(kRoot));
    if (unknown == UnknownFields::kIgnore) reader.IgnoreUnknownFields();
    PersistentResource resource;
    ReadResource(reader, &resource, output_only, version);
    TY_RETURN_IF_ERROR(reader.Finish());
    return resource;
  } catch (const std::exception& e) {
    return Internal(std::string("decoding failed unexpectedly: ") + e.what());
  }
}

nlohmann::json EncodePersistentResource(const PersistentResource& resource, ApiVersion version) {
  json out = json::object();
  PutString(out, "name", resource.name);
  PutString(out, "displayName", resource.display_name);
  json pools = json::array();
  for (const ResourcePool& pool : resource.resource_pools)
    pools.push_back(EncodePool(pool, version));
  out["resourcePools"] = std::move(pools);
  if (resource.state != ResourceState::kUnspecified) {
    out["state"] = std::string(ResourceStateName(resource.state));
  }
  if (resource.error) out["error"] = EncodeRpcStatus(*resource.error);
  if (resource.create_time) out["createTime"] = FormatTimestamp(*resource.create_time);
  if (resource.start_time) out["startTime"] = FormatTimestamp(*resource.start_time);
  if (resource.update_time) out["updateTime"] = FormatTimestamp(*resource.update_time);
  if (!resource.labels.empty()) out["labels"] = resource.labels;
  PutString(out, "network", resource.network);
  if (!resource.reserved_ip_ranges.empty()) out["reservedIpRanges"] = resource.reserved_ip_ranges;
  if (resource.encryption_spec) {
    json e = json::object();
    PutString(e, "kmsKeyName", resource.encryption_spec->kms_key_name);
    out["encryptionSpec"] = std::move(e);
  }
  if (resource.service_account_spec) {
    json s = json::object();
    if (resource.service_account_spec->enable_custom_service_account) {
      s["enableCustomServiceAccount"] = true;
    }
    PutString(s, "serviceAccount", resource.service_account_spec->service_account);
    out["resourceRuntimeSpec"] = {{"serviceAccountSpec", std::move(s)}};
  }
  if (resource.trainyard) out["trainyard"] = EncodeFleetStatus(*resource.trainyard);
  return out;
}

nlohmann::json EncodePersistentResourceResponse(const PersistentResource& resource) {
  json out = {{"@type", "type.googleapis.com/google.cloud.aiplatform.v1.PersistentResource"}};
  out.update(EncodePersistentResource(resource, ApiVersion::kV1));
  return out;
}

}  // namespace trainyard
