#include "api/wire/custom_job_codec.h"

#include <cmath>
#include <exception>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "api/wire/enums.h"
#include "api/wire/json_reader.h"
#include "services/jobs/catalog.h"

namespace trainyard {
namespace {

using nlohmann::json;

// Root of the snake_case paths in messages, as Vertex names the request field.
constexpr char kRoot[] = "custom_job";

// Proto full names, quoted by "Invalid value" messages for message-typed fields.
constexpr std::string_view kEnvVarType = "google.cloud.aiplatform.v1.EnvVar";
constexpr std::string_view kContainerSpecType = "google.cloud.aiplatform.v1.ContainerSpec";
constexpr std::string_view kPythonPackageSpecType = "google.cloud.aiplatform.v1.PythonPackageSpec";
constexpr std::string_view kMachineSpecType = "google.cloud.aiplatform.v1.MachineSpec";
constexpr std::string_view kReservationAffinityType =
    "google.cloud.aiplatform.v1.ReservationAffinity";
constexpr std::string_view kDiskSpecType = "google.cloud.aiplatform.v1.DiskSpec";
constexpr std::string_view kNfsMountType = "google.cloud.aiplatform.v1.NfsMount";
constexpr std::string_view kLustreMountType = "google.cloud.aiplatform.v1.LustreMount";
constexpr std::string_view kPscInterfaceConfigType =
    "google.cloud.aiplatform.v1.PscInterfaceConfig";
constexpr std::string_view kDnsPeeringConfigType = "google.cloud.aiplatform.v1.DnsPeeringConfig";
constexpr std::string_view kWorkerPoolSpecType = "google.cloud.aiplatform.v1.WorkerPoolSpec";
constexpr std::string_view kSchedulingType = "google.cloud.aiplatform.v1.Scheduling";
constexpr std::string_view kGcsDestinationType = "google.cloud.aiplatform.v1.GcsDestination";
constexpr std::string_view kCustomJobSpecType = "google.cloud.aiplatform.v1.CustomJobSpec";
constexpr std::string_view kEncryptionSpecType = "google.cloud.aiplatform.v1.EncryptionSpec";
constexpr std::string_view kRpcStatusType = "google.rpc.Status";
// Our own output-only object has no proto; these names only appear in "Invalid value" messages.
constexpr std::string_view kSchedulingStatusType = "trainyard.SchedulingStatus";
constexpr std::string_view kPlacementType = "trainyard.Placement";
constexpr std::string_view kPlacedPoolType = "trainyard.PlacedPool";
constexpr std::string_view kReasonType = "trainyard.Reason";
constexpr std::string_view kGoodputType = "trainyard.Goodput";
constexpr std::string_view kStartupType = "trainyard.Startup";

// ---- Decoding ----------------------------------------------------------------------------------

// A set-but-empty message (`"diskSpec":{}`) still sets the optional: proto3 keeps message presence.
template <typename T, typename ReadFn>
void ReadOptional(ObjectReader& r, std::string_view name, std::string_view type,
                  std::optional<T>* out, ReadFn read) {
  r.GetObject(name, type, [&](ObjectReader& child) { read(child, &out->emplace()); });
}

template <typename T, typename ReadFn>
void ReadList(ObjectReader& r, std::string_view name, std::string_view type, std::vector<T>* out,
              ReadFn read) {
  r.GetObjectList(name, type,
                  [&](ObjectReader& item, size_t) { read(item, &out->emplace_back()); });
}

void ReadEnvVar(ObjectReader& r, EnvVar* env) {
  r.GetString("name", &env->name);
  r.GetString("value", &env->value);
}

void ReadContainerSpec(ObjectReader& r, ContainerSpec* spec) {
  r.GetString("imageUri", &spec->image_uri);
  r.GetStringList("command", &spec->command);
  r.GetStringList("args", &spec->args);
  ReadList(r, "env", kEnvVarType, &spec->env, ReadEnvVar);
}

void ReadPythonPackageSpec(ObjectReader& r, PythonPackageSpec* spec) {
  r.GetString("executorImageUri", &spec->executor_image_uri);
  r.GetStringList("packageUris", &spec->package_uris);
  r.GetString("pythonModule", &spec->python_module);
  r.GetStringList("args", &spec->args);
  ReadList(r, "env", kEnvVarType, &spec->env, ReadEnvVar);
}

void ReadReservationAffinity(ObjectReader& r, ReservationAffinity* affinity) {
  r.GetEnum("reservationAffinityType", ReservationAffinityTypeTable(), &affinity->type);
  r.GetString("key", &affinity->key);
  r.GetStringList("values", &affinity->values);
}

void ReadMachineSpec(ObjectReader& r, MachineSpec* spec, ApiVersion version) {
  r.GetString("machineType", &spec->machine_type);
  r.GetEnum("acceleratorType", AcceleratorTypeTable(), &spec->accelerator_type);
  r.GetInt32("acceleratorCount", &spec->accelerator_count);
  r.GetString("tpuTopology", &spec->tpu_topology);
  ReadOptional(r, "reservationAffinity", kReservationAffinityType, &spec->reservation_affinity,
               ReadReservationAffinity);
  r.GetString("gpuPartitionSize", &spec->gpu_partition_size);
  // Left unread for v1, so Finish() reports them as unknown names like the v1 front end does.
  if (version == ApiVersion::kV1beta1) {
    r.GetInt32("multihostGpuNodeCount", &spec->multihost_gpu_node_count);
    r.GetString("minGpuDriverVersion", &spec->min_gpu_driver_version);
  }
}

void ReadDiskSpec(ObjectReader& r, DiskSpec* spec) {
  r.GetString("bootDiskType", &spec->boot_disk_type);
  r.GetInt32("bootDiskSizeGb", &spec->boot_disk_size_gb);
}

void ReadNfsMount(ObjectReader& r, NfsMount* mount) {
  r.GetString("server", &mount->server);
  r.GetString("path", &mount->path);
  r.GetString("mountPoint", &mount->mount_point);
}

void ReadLustreMount(ObjectReader& r, LustreMount* mount) {
  r.GetString("instanceIp", &mount->instance_ip);
  r.GetString("volumeHandle", &mount->volume_handle);
  r.GetString("filesystem", &mount->filesystem);
  r.GetString("mountPoint", &mount->mount_point);
}

void ReadDnsPeeringConfig(ObjectReader& r, DnsPeeringConfig* config) {
  r.GetString("domain", &config->domain);
  r.GetString("targetProject", &config->target_project);
  r.GetString("targetNetwork", &config->target_network);
}

void ReadPscInterfaceConfig(ObjectReader& r, PscInterfaceConfig* config) {
  r.GetString("networkAttachment", &config->network_attachment);
  ReadList(r, "dnsPeeringConfigs", kDnsPeeringConfigType, &config->dns_peering_configs,
           ReadDnsPeeringConfig);
}

// containerSpec and pythonPackageSpec form the proto oneof `task`; the JSON mapping rejects a body
// that sets both, so the model never holds two tasks.
void CheckSingleTask(ObjectReader& r, const WorkerPoolSpec& pool) {
  if (!pool.container_spec || !pool.python_package_spec) return;
  r.Fail(InvalidPayload(r.path().Field("pythonPackageSpec"),
                        "Invalid JSON payload received. Oneof field 'task' at '" +
                            r.path().proto() +
                            "' is already set by containerSpec; cannot also set "
                            "pythonPackageSpec."));
}

void ReadWorkerPoolSpec(ObjectReader& r, WorkerPoolSpec* pool, ApiVersion version) {
  ReadOptional(r, "containerSpec", kContainerSpecType, &pool->container_spec, ReadContainerSpec);
  ReadOptional(r, "pythonPackageSpec", kPythonPackageSpecType, &pool->python_package_spec,
               ReadPythonPackageSpec);
  CheckSingleTask(r, *pool);
  ReadOptional(
      r, "machineSpec", kMachineSpecType, &pool->machine_spec,
      [version](ObjectReader& m, MachineSpec* spec) { ReadMachineSpec(m, spec, version); });
  r.GetInt64("replicaCount", &pool->replica_count);
  ReadOptional(r, "diskSpec", kDiskSpecType, &pool->disk_spec, ReadDiskSpec);
  ReadList(r, "nfsMounts", kNfsMountType, &pool->nfs_mounts, ReadNfsMount);
  ReadList(r, "lustreMounts", kLustreMountType, &pool->lustre_mounts, ReadLustreMount);
}

void ReadScheduling(ObjectReader& r, Scheduling* scheduling) {
  r.GetDuration("timeout", &scheduling->timeout);
  r.GetBool("restartJobOnWorkerRestart", &scheduling->restart_job_on_worker_restart);
  r.GetEnum("strategy", SchedulingStrategyTable(), &scheduling->strategy);
  r.GetBool("disableRetries", &scheduling->disable_retries);
  r.GetDuration("maxWaitDuration", &scheduling->max_wait_duration);
}

void ReadBaseOutputDirectory(ObjectReader& r, CustomJobSpec* spec) {
  r.GetObject("baseOutputDirectory", kGcsDestinationType, [&](ObjectReader& gcs) {
    gcs.GetString("outputUriPrefix", &spec->base_output_directory.emplace());
  });
}

void ReadCustomJobSpec(ObjectReader& r, CustomJobSpec* spec, ApiVersion version) {
  ReadList(
      r, "workerPoolSpecs", kWorkerPoolSpecType, &spec->worker_pool_specs,
      [version](ObjectReader& p, WorkerPoolSpec* pool) { ReadWorkerPoolSpec(p, pool, version); });
  ReadOptional(r, "scheduling", kSchedulingType, &spec->scheduling, ReadScheduling);
  r.GetString("serviceAccount", &spec->service_account);
  r.GetString("network", &spec->network);
  r.GetStringList("reservedIpRanges", &spec->reserved_ip_ranges);
  ReadBaseOutputDirectory(r, spec);
  r.GetString("protectedArtifactLocationId", &spec->protected_artifact_location_id);
  r.GetString("tensorboard", &spec->tensorboard);
  r.GetBool("enableWebAccess", &spec->enable_web_access);
  r.GetBool("enableDashboardAccess", &spec->enable_dashboard_access);
  r.GetString("experiment", &spec->experiment);
  r.GetString("experimentRun", &spec->experiment_run);
  r.GetStringList("models", &spec->models);
  r.GetString("persistentResourceId", &spec->persistent_resource_id);
  ReadOptional(r, "pscInterfaceConfig", kPscInterfaceConfigType, &spec->psc_interface_config,
               ReadPscInterfaceConfig);
}

void ReadRpcStatus(ObjectReader& r, RpcStatus* status) {
  r.GetInt32("code", &status->code);
  r.GetString("message", &status->message);
  // google.rpc.Status.details (Any[]) has no place in the model; accepted so that a status
  // produced elsewhere still decodes.
  r.Skip("details");
}

void ReadEncryptionSpec(ObjectReader& r, EncryptionSpec* spec) {
  r.GetString("kmsKeyName", &spec->kms_key_name);
}

void ReadPlacedPool(ObjectReader& r, PlacedPoolStatus* pool) {
  r.GetString("pool", &pool->pool_id);
  r.GetString("machineType", &pool->machine_type);
  r.GetString("consumptionModel", &pool->consumption_model);
  r.GetString("reservation", &pool->reservation);
  r.GetInt64("units", &pool->units);
  r.GetStringList("nodes", &pool->nodes);
  r.GetInt32("blocks", &pool->blocks);
}

// The inverse of EncodeSchedulingStatus, for clients reading a job back (the SDK, the CLI).
void ReadSchedulingStatus(ObjectReader& r, SchedulingStatus* s) {
  r.GetObject("reason", kReasonType, [&](ObjectReader& reason) {
    reason.GetString("code", &s->reason_code);
    reason.GetString("message", &s->reason_message);
  });
  int64_t position = 0;
  if (r.GetInt64("queuePosition", &position)) s->queue_position = position;
  r.GetInt32("priority", &s->priority);
  r.GetObject("placement", kPlacementType, [&](ObjectReader& placement) {
    placement.GetString("zone", &s->zone);
    ReadList(placement, "pools", kPlacedPoolType, &s->pools, ReadPlacedPool);
  });
  r.GetTimestamp("admitTime", &s->admitted_at);
  r.GetObject("startup", kStartupType, [&](ObjectReader& startup) {
    StartupDetail& d = s->startup_detail;
    startup.GetDuration("duration", &s->startup);
    startup.GetString("machineType", &d.machine_type);
    startup.GetInt64("bootNodes", &d.boot_nodes);
    startup.GetDuration("bootDuration", &d.boot);
    startup.GetDouble("imageSizeGb", &d.image_gb);
    startup.GetDuration("imagePullDuration", &d.image_pull);
    startup.GetDuration("programStartupDuration", &s->program_startup);
    startup.Skip("readyTime");  // admitTime + duration
  });
  r.GetDouble("hourlyPriceUsd", &s->hourly_price_usd);
  r.GetDouble("costUsd", &s->cost_usd);
  r.Skip("costPerProductiveAcceleratorHourUsd");  // follows from the cost and the goodput
  // The buckets; productive, lost and the ratio follow from them.
  r.GetObject("goodput", kGoodputType, [&](ObjectReader& g) {
    g.GetDuration("waitingTime", &s->goodput.waiting);
    g.GetDuration("startingTime", &s->goodput.starting);
    g.GetDuration("restartingTime", &s->goodput.restarting);
    g.GetDuration("runningTime", &s->goodput.running);
    g.GetDuration("redoneTime", &s->goodput.redone);
    g.GetDuration("checkpointSaveTime", &s->goodput.checkpoint_save);
    g.GetDuration("checkpointRestoreTime", &s->goodput.checkpoint_restore);
    g.GetDuration("programStartupTime", &s->goodput.program_startup);
    for (std::string_view derived :
         {"productiveTime", "lostTime", "ratio", "schedulingRatio", "badput"}) {
      g.Skip(derived);
    }
  });
}

void ReadCustomJob(ObjectReader& r, CustomJob* job, OutputOnlyFields output_only,
                   ApiVersion version) {
  r.GetString("name", &job->name);
  r.GetString("displayName", &job->display_name);
  r.GetObject("jobSpec", kCustomJobSpecType,
              [&](ObjectReader& spec) { ReadCustomJobSpec(spec, &job->job_spec, version); });
  r.GetEnum("state", JobStateTable(), &job->state);
  ReadOptional(r, "error", kRpcStatusType, &job->error, ReadRpcStatus);
  r.GetTimestamp("createTime", &job->create_time);
  r.GetTimestamp("startTime", &job->start_time);
  r.GetTimestamp("endTime", &job->end_time);
  r.GetTimestamp("updateTime", &job->update_time);
  r.GetStringMap("labels", &job->labels);
  ReadOptional(r, "encryptionSpec", kEncryptionSpecType, &job->encryption_spec, ReadEncryptionSpec);
  r.GetStringMap("webAccessUris", &job->web_access_uris);
  // Reserved output-only bools with no place in the model: type-checked, then dropped.
  bool reserved = false;
  r.GetBool("satisfiesPzs", &reserved);
  r.GetBool("satisfiesPzi", &reserved);
  // Our output-only scheduling object: read back by our own clients, skipped on create (clients
  // that round-trip a job echo it).
  if (output_only == OutputOnlyFields::kKeep) {
    ReadOptional(r, "trainyard", kSchedulingStatusType, &job->trainyard, ReadSchedulingStatus);
  } else {
    r.Skip("trainyard");
  }
}

// Vertex ignores output-only fields on create rather than rejecting them.
void ClearOutputOnly(CustomJob* job) {
  job->name.clear();
  job->state = JobState::kUnspecified;
  job->error.reset();
  job->create_time.reset();
  job->start_time.reset();
  job->end_time.reset();
  job->update_time.reset();
  job->web_access_uris.clear();
}

// nlohmann throws only on allocation failure or a bug of ours; either way it must not escape.
Status UnexpectedException(const std::exception& e) {
  return Internal(std::string("decoding failed unexpectedly: ") + e.what());
}

// ---- Encoding ----------------------------------------------------------------------------------

void PutString(json& out, const char* key, const std::string& value) {
  if (!value.empty()) out[key] = value;
}

void PutBool(json& out, const char* key, bool value) {
  if (value) out[key] = true;
}

void PutInt32(json& out, const char* key, int32_t value) {
  if (value != 0) out[key] = value;
}

void PutStrings(json& out, const char* key, const std::vector<std::string>& values) {
  if (!values.empty()) out[key] = values;
}

void PutMap(json& out, const char* key, const std::map<std::string, std::string>& values) {
  if (!values.empty()) out[key] = values;
}

// By name; a number outside the enum (only reachable by a cast) goes out as the number, as
// protobuf does for unknown enum values.
template <typename E>
void PutEnum(json& out, const char* key, const EnumTable& table, E value) {
  const int number = static_cast<int>(value);
  if (number == 0) return;
  std::optional<std::string_view> name = table.NameOf(number);
  out[key] = name ? json(std::string(*name)) : json(number);
}

void PutDuration(json& out, const char* key, const std::optional<Duration>& value) {
  if (value) out[key] = FormatDuration(*value);
}

void PutTimestamp(json& out, const char* key, const std::optional<Timestamp>& value) {
  if (value) out[key] = FormatTimestamp(*value);
}

template <typename T, typename EncodeFn>
void PutOptional(json& out, const char* key, const std::optional<T>& value, EncodeFn encode) {
  if (value) out[key] = encode(*value);
}

template <typename T, typename EncodeFn>
void PutList(json& out, const char* key, const std::vector<T>& values, EncodeFn encode) {
  if (values.empty()) return;
  json list = json::array();
  for (const T& value : values) list.push_back(encode(value));
  out[key] = std::move(list);
}

json EncodeEnvVar(const EnvVar& env) {
  json out = json::object();
  PutString(out, "name", env.name);
  PutString(out, "value", env.value);
  return out;
}

json EncodeContainerSpec(const ContainerSpec& spec) {
  json out = json::object();
  PutString(out, "imageUri", spec.image_uri);
  PutStrings(out, "command", spec.command);
  PutStrings(out, "args", spec.args);
  PutList(out, "env", spec.env, EncodeEnvVar);
  return out;
}

json EncodePythonPackageSpec(const PythonPackageSpec& spec) {
  json out = json::object();
  PutString(out, "executorImageUri", spec.executor_image_uri);
  PutStrings(out, "packageUris", spec.package_uris);
  PutString(out, "pythonModule", spec.python_module);
  PutStrings(out, "args", spec.args);
  PutList(out, "env", spec.env, EncodeEnvVar);
  return out;
}

json EncodeReservationAffinity(const ReservationAffinity& affinity) {
  json out = json::object();
  PutEnum(out, "reservationAffinityType", ReservationAffinityTypeTable(), affinity.type);
  PutString(out, "key", affinity.key);
  PutStrings(out, "values", affinity.values);
  return out;
}

json EncodeMachineSpec(const MachineSpec& spec, ApiVersion version) {
  json out = json::object();
  PutString(out, "machineType", spec.machine_type);
  PutEnum(out, "acceleratorType", AcceleratorTypeTable(), spec.accelerator_type);
  PutInt32(out, "acceleratorCount", spec.accelerator_count);
  PutString(out, "tpuTopology", spec.tpu_topology);
  PutOptional(out, "reservationAffinity", spec.reservation_affinity, EncodeReservationAffinity);
  PutString(out, "gpuPartitionSize", spec.gpu_partition_size);
  if (version == ApiVersion::kV1beta1) {
    PutInt32(out, "multihostGpuNodeCount", spec.multihost_gpu_node_count);
    PutString(out, "minGpuDriverVersion", spec.min_gpu_driver_version);
  }
  return out;
}

json EncodeDiskSpec(const DiskSpec& spec) {
  json out = json::object();
  PutString(out, "bootDiskType", spec.boot_disk_type);
  PutInt32(out, "bootDiskSizeGb", spec.boot_disk_size_gb);
  return out;
}

json EncodeNfsMount(const NfsMount& mount) {
  json out = json::object();
  PutString(out, "server", mount.server);
  PutString(out, "path", mount.path);
  PutString(out, "mountPoint", mount.mount_point);
  return out;
}

json EncodeLustreMount(const LustreMount& mount) {
  json out = json::object();
  PutString(out, "instanceIp", mount.instance_ip);
  PutString(out, "volumeHandle", mount.volume_handle);
  PutString(out, "filesystem", mount.filesystem);
  PutString(out, "mountPoint", mount.mount_point);
  return out;
}

json EncodeDnsPeeringConfig(const DnsPeeringConfig& config) {
  json out = json::object();
  PutString(out, "domain", config.domain);
  PutString(out, "targetProject", config.target_project);
  PutString(out, "targetNetwork", config.target_network);
  return out;
}

json EncodePscInterfaceConfig(const PscInterfaceConfig& config) {
  json out = json::object();
  PutString(out, "networkAttachment", config.network_attachment);
  PutList(out, "dnsPeeringConfigs", config.dns_peering_configs, EncodeDnsPeeringConfig);
  return out;
}

json EncodeWorkerPoolSpec(const WorkerPoolSpec& pool, ApiVersion version) {
  json out = json::object();
  // `{}` keeps the position (= role) of the pools after it.
  if (pool.IsPlaceholder()) return out;
  PutOptional(out, "containerSpec", pool.container_spec, EncodeContainerSpec);
  PutOptional(out, "pythonPackageSpec", pool.python_package_spec, EncodePythonPackageSpec);
  PutOptional(out, "machineSpec", pool.machine_spec,
              [version](const MachineSpec& spec) { return EncodeMachineSpec(spec, version); });
  // int64 goes out as a string; 0 means "not sent", which Vertex treats as 1.
  out["replicaCount"] = std::to_string(pool.replica_count == 0 ? 1 : pool.replica_count);
  PutOptional(out, "diskSpec", pool.disk_spec, EncodeDiskSpec);
  PutList(out, "nfsMounts", pool.nfs_mounts, EncodeNfsMount);
  PutList(out, "lustreMounts", pool.lustre_mounts, EncodeLustreMount);
  return out;
}

json EncodeScheduling(const Scheduling& scheduling) {
  json out = json::object();
  PutDuration(out, "timeout", scheduling.timeout);
  PutBool(out, "restartJobOnWorkerRestart", scheduling.restart_job_on_worker_restart);
  PutEnum(out, "strategy", SchedulingStrategyTable(), scheduling.strategy);
  PutBool(out, "disableRetries", scheduling.disable_retries);
  PutDuration(out, "maxWaitDuration", scheduling.max_wait_duration);
  return out;
}

json EncodeGcsDestination(const std::string& output_uri_prefix) {
  json out = json::object();
  PutString(out, "outputUriPrefix", output_uri_prefix);
  return out;
}

json EncodeEncryptionSpec(const EncryptionSpec& spec) {
  json out = json::object();
  PutString(out, "kmsKeyName", spec.kms_key_name);
  return out;
}

}  // namespace

StatusOr<CustomJob> DecodeCustomJob(const nlohmann::json& body, OutputOnlyFields output_only,
                                    UnknownFields unknown, ApiVersion version) {
  try {
    ObjectReader reader(body, FieldPath(kRoot));
    if (unknown == UnknownFields::kIgnore) reader.IgnoreUnknownFields();
    CustomJob job;
    ReadCustomJob(reader, &job, output_only, version);
    TY_RETURN_IF_ERROR(reader.Finish());
    if (output_only == OutputOnlyFields::kIgnore) ClearOutputOnly(&job);
    return job;
  } catch (const std::exception& e) {
    return UnexpectedException(e);
  }
}

StatusOr<CustomJobSpec> DecodeCustomJobSpec(const nlohmann::json& spec, std::string path,
                                            ApiVersion version) {
  try {
    ObjectReader reader(spec, FieldPath(kRoot, path));
    CustomJobSpec result;
    ReadCustomJobSpec(reader, &result, version);
    TY_RETURN_IF_ERROR(reader.Finish());
    return result;
  } catch (const std::exception& e) {
    return UnexpectedException(e);
  }
}

nlohmann::json EncodeCustomJobSpec(const CustomJobSpec& spec, ApiVersion version) {
  json out = json::object();
  PutList(out, "workerPoolSpecs", spec.worker_pool_specs,
          [version](const WorkerPoolSpec& pool) { return EncodeWorkerPoolSpec(pool, version); });
  PutOptional(out, "scheduling", spec.scheduling, EncodeScheduling);
  PutString(out, "serviceAccount", spec.service_account);
  PutString(out, "network", spec.network);
  PutStrings(out, "reservedIpRanges", spec.reserved_ip_ranges);
  PutOptional(out, "baseOutputDirectory", spec.base_output_directory, EncodeGcsDestination);
  PutString(out, "protectedArtifactLocationId", spec.protected_artifact_location_id);
  PutString(out, "tensorboard", spec.tensorboard);
  PutBool(out, "enableWebAccess", spec.enable_web_access);
  PutBool(out, "enableDashboardAccess", spec.enable_dashboard_access);
  PutString(out, "experiment", spec.experiment);
  PutString(out, "experimentRun", spec.experiment_run);
  PutStrings(out, "models", spec.models);
  PutString(out, "persistentResourceId", spec.persistent_resource_id);
  PutOptional(out, "pscInterfaceConfig", spec.psc_interface_config, EncodePscInterfaceConfig);
  return out;
}

StatusOr<RpcStatus> DecodeRpcStatus(const nlohmann::json& body, UnknownFields unknown) {
  try {
    ObjectReader reader(body, FieldPath("status"));
    if (unknown == UnknownFields::kIgnore) reader.IgnoreUnknownFields();
    RpcStatus status;
    ReadRpcStatus(reader, &status);
    TY_RETURN_IF_ERROR(reader.Finish());
    return status;
  } catch (const std::exception& e) {
    return UnexpectedException(e);
  }
}

nlohmann::json EncodeRpcStatus(const RpcStatus& status) {
  json out = json::object();
  PutInt32(out, "code", status.code);
  PutString(out, "message", status.message);
  return out;
}

// Durations to the millisecond: a ratio's inputs, not a clock.
json EncodeGoodput(const JobGoodput& g) {
  // Built by assignment: an initializer list copies every element once more, which made this the
  // costliest part of a list page's encoding (perf, issue 37).
  auto time = [](Duration d) {
    return FormatDuration(std::chrono::duration_cast<std::chrono::milliseconds>(d));
  };
  json out = json::object();
  out["productiveTime"] = time(g.Productive());
  out["lostTime"] = time(g.Lost());
  out["redoneTime"] = time(g.redone);
  out["restartingTime"] = time(g.restarting);
  out["waitingTime"] = time(g.waiting);
  out["startingTime"] = time(g.starting);
  out["runningTime"] = time(g.running);
  out["checkpointSaveTime"] = time(g.checkpoint_save);
  out["checkpointRestoreTime"] = time(g.checkpoint_restore);
  out["programStartupTime"] = time(g.program_startup);
  // The same time in ML Goodput's badput buckets (ml-goodput-measurement's BadputType): the
  // first provisioning is TPU_INITIALIZATION (GPUs' too), each run's start-up to its first step
  // PROGRAM_STARTUP, and nothing is left over, so OTHER is zero.
  json badput = json::object();
  badput["TPU_INITIALIZATION"] = time(g.starting);
  badput["PROGRAM_STARTUP"] = time(g.program_startup);
  badput["UNPRODUCTIVE_CHECKPOINT_SAVE_TIME"] = time(g.checkpoint_save);
  badput["UNPRODUCTIVE_CHECKPOINT_RESTORE_TIME"] = time(g.checkpoint_restore);
  badput["WASTED_PROGRESS_FROM_DISRUPTION"] = time(g.redone);
  badput["INFRASTRUCTURE_RECOVERY_FROM_DISRUPTION"] = time(g.restarting);
  badput["OTHER"] = time(Duration{});
  out["badput"] = std::move(badput);
  if (std::optional<double> ratio = g.Ratio()) out["ratio"] = std::round(*ratio * 1e4) / 1e4;
  if (std::optional<double> s = g.SchedulingRatio()) {
    out["schedulingRatio"] = std::round(*s * 1e4) / 1e4;
  }
  return out;
}

nlohmann::json EncodePlacementStatus(const std::string& zone,
                                     const std::vector<PlacedPoolStatus>& pools) {
  json placement = {{"zone", zone}, {"pools", json::array()}};
  for (const PlacedPoolStatus& p : pools) {
    json pool = {{"pool", p.pool_id},
                 {"machineType", p.machine_type},
                 {"consumptionModel", p.consumption_model},
                 {"units", p.units},
                 {"nodes", p.nodes}};
    if (!p.reservation.empty()) pool["reservation"] = p.reservation;
    if (p.blocks > 0) pool["blocks"] = p.blocks;
    placement["pools"].push_back(std::move(pool));
  }
  return placement;
}

// What the placement waits for before its replicas start (model time), and when it is ready;
// then each run's program start-up before its first step (goodput's PROGRAM_STARTUP).
nlohmann::json EncodeStartup(const SchedulingStatus& s) {
  const StartupDetail& d = s.startup_detail;
  json out = {{"duration", FormatDuration(s.startup)}};
  if (d.boot_nodes > 0) {
    out["machineType"] = d.machine_type;
    out["bootNodes"] = d.boot_nodes;
    out["bootDuration"] = FormatDuration(d.boot);
  }
  if (d.image_gb > 0) {
    out["imageSizeGb"] = d.image_gb;
    out["imagePullDuration"] = FormatDuration(d.image_pull);
  }
  if (s.program_startup > Duration{}) {
    out["programStartupDuration"] = FormatDuration(s.program_startup);
  }
  PutTimestamp(out, "readyTime",
               *s.admitted_at + std::chrono::duration_cast<std::chrono::microseconds>(s.startup));
  return out;
}

nlohmann::json EncodeSchedulingStatus(const SchedulingStatus& s) {
  json out = json::object();
  if (!s.reason_code.empty()) {
    out["reason"] = {{"code", s.reason_code}, {"message", s.reason_message}};
  }
  if (s.queue_position) out["queuePosition"] = *s.queue_position;
  out["priority"] = s.priority;
  if (!s.zone.empty()) out["placement"] = EncodePlacementStatus(s.zone, s.pools);
  PutTimestamp(out, "admitTime", s.admitted_at);
  if (s.admitted_at && (s.startup > Duration{} || s.program_startup > Duration{})) {
    out["startup"] = EncodeStartup(s);
  }
  out["hourlyPriceUsd"] = s.hourly_price_usd;
  out["costUsd"] = s.cost_usd;
  if (s.spot_restarts > 0) out["spotRestarts"] = s.spot_restarts;
  if (s.attempt > 0) out["attempt"] = s.attempt;
  out["goodput"] = EncodeGoodput(s.goodput);
  if (std::optional<double> per_hour = CostPerProductiveAcceleratorHour(s)) {
    out["costPerProductiveAcceleratorHourUsd"] = std::round(*per_hour * 1e4) / 1e4;
  }
  if (!s.replicas.empty()) {
    json replicas = json::array();
    for (const ReplicaRun& r : s.replicas) {
      json replica = {{"taskName", r.task_name}, {"state", ReplicaPhaseName(r.phase)}};
      if (r.exit_code) replica["exitCode"] = *r.exit_code;
      if (r.restarts > 0) replica["restarts"] = r.restarts;
      replicas.push_back(std::move(replica));
    }
    out["replicas"] = std::move(replicas);
  }
  return out;
}

nlohmann::json EncodeCustomJob(const CustomJob& job, ApiVersion version) {
  json out = json::object();
  PutString(out, "name", job.name);
  PutString(out, "displayName", job.display_name);
  // Always present: jobSpec is required, and a client reading a job expects it.
  out["jobSpec"] = EncodeCustomJobSpec(job.job_spec, version);
  PutEnum(out, "state", JobStateTable(), job.state);
  PutOptional(out, "error", job.error, EncodeRpcStatus);
  PutTimestamp(out, "createTime", job.create_time);
  PutTimestamp(out, "startTime", job.start_time);
  PutTimestamp(out, "endTime", job.end_time);
  PutTimestamp(out, "updateTime", job.update_time);
  PutMap(out, "labels", job.labels);
  PutOptional(out, "encryptionSpec", job.encryption_spec, EncodeEncryptionSpec);
  PutMap(out, "webAccessUris", job.web_access_uris);
  PutOptional(out, "trainyard", job.trainyard, EncodeSchedulingStatus);
  return out;
}

void ReadMachineSpecMessage(ObjectReader& r, MachineSpec* spec, ApiVersion version) {
  ReadMachineSpec(r, spec, version);
}
void ReadDiskSpecMessage(ObjectReader& r, DiskSpec* spec) { ReadDiskSpec(r, spec); }
void ReadEncryptionSpecMessage(ObjectReader& r, EncryptionSpec* spec) {
  ReadEncryptionSpec(r, spec);
}
nlohmann::json EncodeMachineSpecMessage(const MachineSpec& spec, ApiVersion version) {
  return EncodeMachineSpec(spec, version);
}
nlohmann::json EncodeDiskSpecMessage(const DiskSpec& spec) { return EncodeDiskSpec(spec); }

}  // namespace trainyard
