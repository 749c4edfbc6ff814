#include "services/jobs/custom_job_validator.h"

#include "services/jobs/field_rules.h"

#include <chrono>
#include <string>
#include <string_view>
#include <unordered_set>

#include "services/jobs/catalog.h"
#include "services/jobs/workload_model.h"

namespace trainyard {
namespace {

// Limits from docs/wire-format.md ("Limits a create is checked against") unless noted.
constexpr size_t kMaxDisplayNameChars = 128;
constexpr size_t kMaxLabels = 64;
constexpr size_t kMaxLabelChars = 63;  // GCE label rule; stricter than the 64 in the resource doc
constexpr size_t kMaxWorkerPools = 4;
// Vertex documents no ceiling; a typo like 10000 would otherwise tie up the scheduler.
constexpr int64_t kMaxReplicaCount = 1000;
constexpr size_t kMaxEnv = 100;
constexpr size_t kMaxPackageUris = 100;
constexpr size_t kMaxArgs = 1000;  // ours: bounds request size without hurting real launchers
constexpr int32_t kMinBootDiskGb = 100;
constexpr int32_t kMaxBootDiskGb = 64000;
// Vertex's default timeout and FLEX_START's hard limit; we cap every strategy there, because a
// longer run cannot be scheduled honestly against 7-day DWS and reservation windows.
constexpr Duration kMaxTimeout = std::chrono::hours(24 * 7);
constexpr std::string_view kReservationKey = "compute.googleapis.com/reservation-name";

std::string Str(std::string_view s) { return std::string(s); }

std::string Index(std::string_view path, size_t i) {
  return Str(path) + "[" + std::to_string(i) + "]";
}

// Re-roots a catalog error (whose field is relative to a MachineSpec) under `prefix`.
Status Under(const std::string& prefix, const Status& s) {
  if (s.ok()) return s;
  if (s.violations().empty()) return InvalidField(prefix, s.message());
  const FieldViolation& v = s.violations().front();
  return InvalidField(prefix + "." + v.field, v.description);
}

bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return IsLower(c) || (c >= 'A' && c <= 'Z'); }

// Code points, not bytes: Vertex counts characters. The JSON layer guarantees valid UTF-8, so
// counting the bytes that are not continuation bytes (10xxxxxx) is exact.
size_t Utf8Length(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

bool IsLabelChar(char c) { return IsLower(c) || IsDigit(c) || c == '_' || c == '-'; }

bool AllLabelChars(std::string_view s) {
  for (char c : s) {
    if (!IsLabelChar(c)) return false;
  }
  return true;
}

// [a-z]([a-z0-9-]{0,61}[a-z0-9])? — RFC 1035 labels as GCE and Vertex use them for resource IDs.
bool IsRfc1035Name(std::string_view s) {
  if (s.empty() || s.size() > 63 || !IsLower(s.front())) return false;
  if (s.back() == '-') return false;
  for (char c : s) {
    if (!IsLower(c) && !IsDigit(c) && c != '-') return false;
  }
  return true;
}

bool IsEnvVarName(std::string_view s) {
  if (s.empty() || !(IsAlpha(s.front()) || s.front() == '_')) return false;
  for (char c : s) {
    if (!IsAlpha(c) && !IsDigit(c) && c != '_') return false;
  }
  return true;
}

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsDigit(c)) return false;
  }
  return true;
}

// A deliberately loose shape check: one '@', something on both sides, a dot in the domain, no
// spaces. IAM decides whether the account exists; we only catch values that cannot be emails.
bool LooksLikeEmail(std::string_view s) {
  const size_t at = s.find('@');
  if (at == std::string_view::npos || at == 0 || s.find('@', at + 1) != std::string_view::npos) {
    return false;
  }
  const std::string_view domain = s.substr(at + 1);
  if (domain.empty() || domain.front() == '.' || domain.back() == '.' ||
      domain.find('.') == std::string_view::npos) {
    return false;
  }
  for (char c : s) {
    if (static_cast<unsigned char>(c) <= ' ' || static_cast<unsigned char>(c) >= 0x7f) return false;
  }
  return true;
}

// projects/{number}/global/networks/{name}. Vertex documents {project} here as a project number.
bool IsNetworkName(std::string_view s) {
  constexpr std::string_view kPrefix = "projects/";
  constexpr std::string_view kMiddle = "/global/networks/";
  if (!s.starts_with(kPrefix)) return false;
  s.remove_prefix(kPrefix.size());
  const size_t slash = s.find('/');
  if (slash == std::string_view::npos || !AllDigits(s.substr(0, slash))) return false;
  s.remove_prefix(slash);
  if (!s.starts_with(kMiddle)) return false;
  s.remove_prefix(kMiddle.size());
  return IsRfc1035Name(s);
}

bool IsKnownStrategy(SchedulingStrategy s) {
  switch (s) {
    case SchedulingStrategy::kUnspecified:
    case SchedulingStrategy::kOnDemand:
    case SchedulingStrategy::kLowCost:
    case SchedulingStrategy::kStandard:
    case SchedulingStrategy::kSpot:
    case SchedulingStrategy::kFlexStart:
      return true;
  }
  return false;
}

bool IsKnownReservationType(ReservationAffinityType t) {
  switch (t) {
    case ReservationAffinityType::kUnspecified:
    case ReservationAffinityType::kNoReservation:
    case ReservationAffinityType::kAnyReservation:
    case ReservationAffinityType::kSpecificReservation:
      return true;
  }
  return false;
}

// GPUs Dynamic Workload Scheduler provisions (docs/wire-format.md, "Limits").
bool IsFlexStartAccelerator(AcceleratorType t) {
  switch (t) {
    case AcceleratorType::kNvidiaL4:
    case AcceleratorType::kNvidiaTeslaA100:
    case AcceleratorType::kNvidiaA100_80gb:
    case AcceleratorType::kNvidiaH100_80gb:
    case AcceleratorType::kNvidiaH100Mega80gb:
    case AcceleratorType::kNvidiaH200_141gb:
    case AcceleratorType::kNvidiaB200:
      return true;
    default:
      return false;
  }
}

Status ValidateDisplayName(const std::string& name) {
  if (name.empty()) return InvalidField("displayName", "displayName is required");
  const size_t chars = Utf8Length(name);
  if (chars > kMaxDisplayNameChars) {
    return InvalidField("displayName", "displayName must be at most 128 characters (got " +
                                           std::to_string(chars) + ")");
  }
  return Status::Ok();
}

Status ValidateLabels(const std::map<std::string, std::string>& labels) {
  if (labels.size() > kMaxLabels) {
    return InvalidField(
        "labels", "at most 64 labels are allowed (got " + std::to_string(labels.size()) + ")");
  }
  static const std::string kAsciiNote =
      " (ASCII only: Trainyard does not accept the international lowercase letters GCP allows)";
  for (const auto& [key, value] : labels) {
    if (key.empty()) return InvalidField("labels", "label keys must not be empty");
    const std::string path = "labels." + key;
    if (key.size() > kMaxLabelChars || !IsLower(key.front()) || !AllLabelChars(key)) {
      return InvalidField(path,
                          "label keys are 1-63 characters, start with a lowercase letter and "
                          "contain only lowercase letters, digits, '_' and '-'" +
                              kAsciiNote);
    }
    if (key.starts_with("goog-")) {
      return InvalidField(path, "label keys beginning with goog- are reserved for Google Cloud");
    }
    if (value.size() > kMaxLabelChars || !AllLabelChars(value)) {
      return InvalidField(path,
                          "label values are 0-63 characters of lowercase letters, digits, '_' "
                          "and '-'" +
                              kAsciiNote);
    }
  }
  return Status::Ok();
}

Status ValidateEnv(const std::vector<EnvVar>& env, const std::string& path) {
  if (env.size() > kMaxEnv) {
    return InvalidField(path, "at most 100 environment variables are allowed (got " +
                                  std::to_string(env.size()) + ")");
  }
  std::unordered_set<std::string_view> seen;
  for (size_t i = 0; i < env.size(); ++i) {
    const std::string& name = env[i].name;
    if (!IsEnvVarName(name)) {
      return InvalidField(
          Index(path, i) + ".name",
          "environment variable names match [A-Za-z_][A-Za-z0-9_]* (got \"" + name + "\")");
    }
    if (!seen.insert(name).second) {
      return InvalidField(Index(path, i) + ".name",
                          "environment variable " + name + " is set more than once");
    }
  }
  return Status::Ok();
}

Status ValidateArgList(const std::vector<std::string>& list, const std::string& path) {
  if (list.size() > kMaxArgs) {
    return InvalidField(
        path, "at most 1000 entries are allowed (got " + std::to_string(list.size()) + ")");
  }
  return Status::Ok();
}

Status ValidateContainerSpec(const ContainerSpec& spec, const std::string& path) {
  if (spec.image_uri.empty()) {
    return InvalidField(path + ".imageUri",
                        "imageUri is required: the training container image to run");
  }
  TY_RETURN_IF_ERROR(ValidateArgList(spec.command, path + ".command"));
  TY_RETURN_IF_ERROR(ValidateArgList(spec.args, path + ".args"));
  return ValidateEnv(spec.env, path + ".env");
}

Status ValidatePythonPackageSpec(const PythonPackageSpec& spec, const std::string& path) {
  if (spec.executor_image_uri.empty()) {
    return InvalidField(path + ".executorImageUri",
                        "executorImageUri is required: the prebuilt container that runs the "
                        "package");
  }
  if (spec.package_uris.empty()) {
    return InvalidField(path + ".packageUris",
                        "at least one package URI is required (e.g. gs://bucket/trainer.tar.gz)");
  }
  if (spec.package_uris.size() > kMaxPackageUris) {
    return InvalidField(path + ".packageUris", "at most 100 package URIs are allowed (got " +
                                                   std::to_string(spec.package_uris.size()) + ")");
  }
  for (size_t i = 0; i < spec.package_uris.size(); ++i) {
    if (spec.package_uris[i].empty()) {
      return InvalidField(Index(path + ".packageUris", i), "package URIs must not be empty");
    }
  }
  if (spec.python_module.empty()) {
    return InvalidField(path + ".pythonModule", "pythonModule is required (e.g. trainer.task)");
  }
  TY_RETURN_IF_ERROR(ValidateArgList(spec.args, path + ".args"));
  return ValidateEnv(spec.env, path + ".env");
}

Status ValidateReservationAffinity(const ReservationAffinity& ra, const std::string& path) {
  if (!IsKnownReservationType(ra.type)) {
    return InvalidField(path + ".reservationAffinityType",
                        "reservationAffinityType must be NO_RESERVATION, ANY_RESERVATION or "
                        "SPECIFIC_RESERVATION");
  }
  if (ra.type == ReservationAffinityType::kSpecificReservation) {
    if (ra.key != kReservationKey) {
      return InvalidField(path + ".key",
                          "SPECIFIC_RESERVATION needs key compute.googleapis.com/reservation-name");
    }
    if (ra.values.empty()) {
      return InvalidField(path + ".values",
                          "SPECIFIC_RESERVATION needs at least one reservation name in values "
                          "(projects/{project}/zones/{zone}/reservations/{name})");
    }
    for (size_t i = 0; i < ra.values.size(); ++i) {
      if (ra.values[i].empty()) {
        return InvalidField(Index(path + ".values", i), "reservation names must not be empty");
      }
    }
    return Status::Ok();
  }
  if (!ra.key.empty()) {
    return InvalidField(path + ".key", "key is only allowed with SPECIFIC_RESERVATION");
  }
  if (!ra.values.empty()) {
    return InvalidField(path + ".values", "values are only allowed with SPECIFIC_RESERVATION");
  }
  return Status::Ok();
}

// "535.104.06": dot-separated decimal numbers, as NVIDIA numbers its drivers.
bool IsDriverVersion(std::string_view s) {
  if (s.empty() || s.front() == '.' || s.back() == '.') return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '.' && s[i + 1] == '.') return false;  // i + 1 exists: s.back() is not '.'
    if (s[i] != '.' && !IsDigit(s[i])) return false;
  }
  return true;
}

// The v1beta1-only MachineSpec fields; the v1 decoder never sets them. Runs after the accelerator
// check, so a machine with GPUs here has its GPU fields right.
Status ValidateGpuHostFields(const MachineSpec& spec, const MachineType& machine,
                             const std::string& path) {
  const int32_t nodes = spec.multihost_gpu_node_count;
  if (nodes != 0) {
    const int max_nodes = MaxMultihostGpuNodes(machine);
    if (max_nodes == 0) {
      return InvalidField(path + ".multihostGpuNodeCount",
                          "multihostGpuNodeCount applies only to a4x-highgpu-4g (GB200 NVL72), "
                          "whose replicas may span several hosts of one NVLink domain; " +
                              spec.machine_type + " is one host per replica");
    }
    if (nodes < 1 || nodes > max_nodes) {
      return InvalidField(path + ".multihostGpuNodeCount",
                          "multihostGpuNodeCount must be between 1 and " +
                              std::to_string(max_nodes) + " (hosts of one NVLink domain) (got " +
                              std::to_string(nodes) + ")");
    }
  }
  if (!spec.min_gpu_driver_version.empty()) {
    const bool has_gpus =
        !machine.is_tpu && (machine.accelerator_count > 0 || spec.accelerator_count > 0);
    if (!has_gpus) {
      return InvalidField(path + ".minGpuDriverVersion",
                          "minGpuDriverVersion applies only to machines with GPUs; " +
                              spec.machine_type + " has none here");
    }
    if (!IsDriverVersion(spec.min_gpu_driver_version)) {
      return InvalidField(path + ".minGpuDriverVersion",
                          "minGpuDriverVersion is an NVIDIA driver version such as 535.104.06 "
                          "(got \"" +
                              spec.min_gpu_driver_version + "\")");
    }
  }
  return Status::Ok();
}

Status ValidateMachineSpec(const MachineSpec& spec, const std::string& path) {
  if (spec.machine_type.empty()) {
    return InvalidField(path + ".machineType",
                        "machineType is required (e.g. n1-standard-4, a3-highgpu-8g, "
                        "ct5lp-hightpu-4t)");
  }
  const MachineType* machine = FindMachineType(spec.machine_type);
  if (machine == nullptr) {
    return InvalidField(
        path + ".machineType",
        "unknown machineType \"" + spec.machine_type +
            "\"; known families are a3-megagpu/a3-highgpu (H100), a3-ultragpu (H200), "
            "a4-highgpu (B200), a4x-highgpu (GB200), "
            "a2-ultragpu/a2-highgpu/a2-megagpu (A100), g2-standard (L4), "
            "g4-standard (RTX PRO 6000), "
            "n1-standard/n1-highmem (attachable T4, V100, P100, P4), n2-standard, "
            "e2-standard, ct5lp-hightpu (TPU v5e), ct5p-hightpu (TPU v5p), "
            "ct4p-hightpu (TPU v4), ct6e-standard (TPU v6e), tpu7x-standard (TPU7x) and "
            "cloud-tpu (TPU v2/v3); the machine catalog lists every size");
  }
  TY_RETURN_IF_ERROR(
      Under(path, CheckAccelerator(*machine, spec.accelerator_type, spec.accelerator_count)));
  // v5e/v5p/v4 hosts always resolve (an empty topology means one host). Every other type,
  // cloud-tpu included, has no topologies, so sending one is the only way to err.
  const bool sized_by_topology = machine->is_tpu && !machine->tpu_family.empty();
  if (sized_by_topology || !spec.tpu_topology.empty()) {
    StatusOr<TpuSlice> slice = ResolveTpuTopology(*machine, spec.tpu_topology);
    if (!slice.ok()) return Under(path, slice.status());
  }
  if (spec.reservation_affinity) {
    TY_RETURN_IF_ERROR(
        ValidateReservationAffinity(*spec.reservation_affinity, path + ".reservationAffinity"));
  }
  return ValidateGpuHostFields(spec, *machine, path);
}

Status ValidateDiskSpec(const DiskSpec& disk, const std::string& path) {
  const int32_t size = disk.boot_disk_size_gb;
  if (size != 0 && (size < kMinBootDiskGb || size > kMaxBootDiskGb)) {
    return InvalidField(
        path + ".bootDiskSizeGb",
        "bootDiskSizeGb must be between 100 and 64000 (got " + std::to_string(size) + ")");
  }
  const std::string& type = disk.boot_disk_type;
  if (!type.empty() && type != "pd-ssd" && type != "pd-standard" && type != "hyperdisk-balanced") {
    return InvalidField(path + ".bootDiskType",
                        "bootDiskType must be pd-ssd (the default), pd-standard or "
                        "hyperdisk-balanced (got \"" +
                            type + "\")");
  }
  return Status::Ok();
}

Status ValidateNfsMounts(const std::vector<NfsMount>& mounts, const std::string& path) {
  for (size_t i = 0; i < mounts.size(); ++i) {
    const std::string p = Index(path, i);
    if (mounts[i].server.empty()) return InvalidField(p + ".server", "server is required");
    if (mounts[i].path.empty()) return InvalidField(p + ".path", "path is required");
    if (mounts[i].mount_point.empty()) {
      return InvalidField(p + ".mountPoint", "mountPoint is required");
    }
  }
  return Status::Ok();
}

// Dotted-quad IPv4, each part 0-255 without leading zeros: the address of a Managed Lustre
// instance, which Vertex mounts by IP.
bool IsIpv4(std::string_view s) {
  int parts = 0;
  while (true) {
    const size_t dot = s.find('.');
    const std::string_view part = s.substr(0, dot);
    if (part.empty() || part.size() > 3 || !AllDigits(part)) return false;
    if (part.size() > 1 && part.front() == '0') return false;
    int value = 0;
    for (char c : part) value = value * 10 + (c - '0');
    if (value > 255) return false;
    ++parts;
    if (dot == std::string_view::npos) break;
    s.remove_prefix(dot + 1);
  }
  return parts == 4;
}

// All four fields are REQUIRED in google.cloud.aiplatform.v1.LustreMount.
Status ValidateLustreMounts(const std::vector<LustreMount>& mounts, const std::string& path) {
  for (size_t i = 0; i < mounts.size(); ++i) {
    const std::string p = Index(path, i);
    const LustreMount& m = mounts[i];
    if (m.instance_ip.empty()) {
      return InvalidField(p + ".instanceIp", "instanceIp is required: the Lustre instance's IP");
    }
    if (!IsIpv4(m.instance_ip)) {
      return InvalidField(p + ".instanceIp",
                          "instanceIp must be an IPv4 address such as "
                          "10.90.1.4 (got \"" +
                              m.instance_ip + "\")");
    }
    if (m.volume_handle.empty()) {
      return InvalidField(p + ".volumeHandle",
                          "volumeHandle is required: the Lustre volume's unique identifier");
    }
    if (m.filesystem.empty()) {
      return InvalidField(p + ".filesystem", "filesystem is required: the Lustre filesystem name");
    }
    if (m.mount_point.empty()) {
      return InvalidField(p + ".mountPoint",
                          "mountPoint is required: the volume appears under "
                          "/mnt/lustre/<mountPoint>");
    }
  }
  return Status::Ok();
}

Status ValidatePool(const WorkerPoolSpec& pool, size_t index, const std::string& path) {
  // replicaCount 0 means "not sent" and defaults to 1.
  if (index == 0) {
    if (pool.replica_count != 0 && pool.replica_count != 1) {
      return InvalidField(path + ".replicaCount",
                          "the primary pool (workerPoolSpecs[0]) runs exactly one replica: "
                          "replicaCount must be 1 (got " +
                              std::to_string(pool.replica_count) + ")");
    }
  } else if (pool.replica_count < 0 || pool.replica_count > kMaxReplicaCount) {
    return InvalidField(path + ".replicaCount", "replicaCount must be between 1 and 1000 (got " +
                                                    std::to_string(pool.replica_count) + ")");
  }
  if (pool.container_spec.has_value() == pool.python_package_spec.has_value()) {
    return InvalidField(path,
                        "a worker pool needs exactly one of containerSpec or pythonPackageSpec");
  }
  if (pool.container_spec) {
    TY_RETURN_IF_ERROR(ValidateContainerSpec(*pool.container_spec, path + ".containerSpec"));
  } else {
    TY_RETURN_IF_ERROR(
        ValidatePythonPackageSpec(*pool.python_package_spec, path + ".pythonPackageSpec"));
  }
  if (!pool.machine_spec) {
    return InvalidField(path + ".machineSpec", "machineSpec is required");
  }
  TY_RETURN_IF_ERROR(ValidateMachineSpec(*pool.machine_spec, path + ".machineSpec"));
  if (pool.disk_spec) TY_RETURN_IF_ERROR(ValidateDiskSpec(*pool.disk_spec, path + ".diskSpec"));
  TY_RETURN_IF_ERROR(ValidateNfsMounts(pool.nfs_mounts, path + ".nfsMounts"));
  return ValidateLustreMounts(pool.lustre_mounts, path + ".lustreMounts");
}

Status ValidateWorkerPools(const std::vector<WorkerPoolSpec>& pools) {
  constexpr std::string_view kPath = "jobSpec.workerPoolSpecs";
  if (pools.empty()) {
    return InvalidField(Str(kPath), "at least one worker pool is required");
  }
  if (pools.size() > kMaxWorkerPools) {
    return InvalidField(Str(kPath),
                        "at most 4 worker pools are allowed (primary, workers, parameter servers "
                        "or reduction server, evaluators; skip one with {})");
  }
  if (pools[0].IsPlaceholder()) {
    return InvalidField(Index(kPath, 0),
                        "the primary pool (workerPoolSpecs[0]) must not be empty: it runs the "
                        "chief replica");
  }
  for (size_t i = 0; i < pools.size(); ++i) {
    if (pools[i].IsPlaceholder()) continue;
    TY_RETURN_IF_ERROR(ValidatePool(pools[i], i, Index(kPath, i)));
  }
  return Status::Ok();
}

Status ValidateScheduling(const Scheduling& s) {
  if (!IsKnownStrategy(s.strategy)) {
    return InvalidField("jobSpec.scheduling.strategy",
                        "strategy must be STANDARD, SPOT, FLEX_START, ON_DEMAND or LOW_COST");
  }
  if (s.timeout) {
    if (s.timeout->count() <= 0) {
      return InvalidField("jobSpec.scheduling.timeout", "timeout must be positive");
    }
    if (*s.timeout > kMaxTimeout) {
      return InvalidField("jobSpec.scheduling.timeout",
                          "timeout must be at most 604800s (7 days): Vertex's default timeout, "
                          "FLEX_START's maximum, and the longest job Trainyard accepts");
    }
  }
  if (s.max_wait_duration) {
    if (s.max_wait_duration->count() < 0) {
      return InvalidField("jobSpec.scheduling.maxWaitDuration",
                          "maxWaitDuration must not be negative (0s waits indefinitely)");
    }
    if (s.strategy != SchedulingStrategy::kFlexStart) {
      return InvalidField("jobSpec.scheduling.maxWaitDuration",
                          "maxWaitDuration applies only with strategy FLEX_START");
    }
  }
  return Status::Ok();
}

// Rules that look at all pools at once. Runs after every pool validated, so each non-placeholder
// pool has a known machine type and a consistent accelerator.
Status ValidateAcrossPools(const CustomJobSpec& spec) {
  const std::vector<WorkerPoolSpec>& pools = spec.worker_pool_specs;
  const SchedulingStrategy strategy =
      spec.scheduling ? spec.scheduling->strategy : SchedulingStrategy::kUnspecified;

  // TPU: one slice in workerPoolSpecs[0], as Vertex has it; or Multislice, Trainyard's extension
  // (XPK's --num-slices, one JobSet replicated job per slice): workerPoolSpecs[1] of the same
  // machine type and topology adds replicaCount more slices, joined over DCN. Nothing else may
  // share a TPU job.
  for (size_t t = 0; t < pools.size(); ++t) {
    if (pools[t].IsPlaceholder()) continue;
    const MachineSpec& ms = *pools[t].machine_spec;
    const MachineType& machine = *FindMachineType(ms.machine_type);
    if (!machine.is_tpu) continue;
    for (size_t i = 1; i < pools.size(); ++i) {
      if (pools[i].IsPlaceholder()) continue;
      const MachineSpec& other = *pools[i].machine_spec;
      const bool more_slices = i == 1 && !machine.tpu_family.empty() &&
                               other.machine_type == pools[0].machine_spec->machine_type &&
                               other.tpu_topology == pools[0].machine_spec->tpu_topology;
      if (more_slices) continue;
      return InvalidField(Index("jobSpec.workerPoolSpecs", i),
                          "a TPU job runs one slice in workerPoolSpecs[0], and for Multislice "
                          "more slices of the same machineType and tpuTopology in "
                          "workerPoolSpecs[1] (its replicaCount); workerPoolSpecs[" +
                              std::to_string(t) + "] uses TPU machine type " + ms.machine_type);
    }
    // SPOT capacity is not offered for TPU Pods (docs/wire-format.md, "Limits").
    bool multi_host = false;
    if (machine.tpu_family.empty()) {
      multi_host = ms.accelerator_count > 8;  // cloud-tpu: 8 cores is one host
    } else {
      StatusOr<TpuSlice> slice = ResolveTpuTopology(machine, ms.tpu_topology);
      multi_host = slice.ok() && slice->hosts > 1;
    }
    if (multi_host && strategy == SchedulingStrategy::kSpot) {
      return InvalidField("jobSpec.scheduling.strategy",
                          "SPOT is not available for multi-host TPU slices (TPU Pods); use "
                          "STANDARD, or a single-host topology for SPOT");
    }
  }

  if (strategy == SchedulingStrategy::kFlexStart) {
    const MachineSpec& first = *pools[0].machine_spec;
    for (size_t i = 0; i < pools.size(); ++i) {
      if (pools[i].IsPlaceholder()) continue;
      const MachineSpec& ms = *pools[i].machine_spec;
      const std::string path = Index("jobSpec.workerPoolSpecs", i) + ".machineSpec";
      if (!IsFlexStartAccelerator(ms.accelerator_type)) {
        return InvalidField(path + ".acceleratorType",
                            "FLEX_START (Dynamic Workload Scheduler) provisions only L4, A100, "
                            "H100, H200 or B200 GPUs: use a g2, a2, a3 or a4 machine type");
      }
      if (ms.machine_type != first.machine_type || ms.accelerator_type != first.accelerator_type ||
          ms.accelerator_count != first.accelerator_count) {
        return InvalidField(path,
                            "FLEX_START provisions one machine configuration for the whole job: "
                            "every worker pool must use the machineType, acceleratorType and "
                            "acceleratorCount of workerPoolSpecs[0] (" +
                                first.machine_type + ")");
      }
    }
  }
  return Status::Ok();
}

// A network attachment by name, or by its full name
// projects/{project}/regions/{region}/networkAttachments/{name}; the proto documents a name in the
// job's region and project, and its resource reference allows the full form.
bool IsNetworkAttachment(std::string_view s) {
  constexpr std::string_view kPrefix = "projects/";
  if (!s.starts_with(kPrefix)) return IsRfc1035Name(s);
  s.remove_prefix(kPrefix.size());
  const size_t project_end = s.find('/');
  if (project_end == 0 || project_end == std::string_view::npos) return false;
  s.remove_prefix(project_end);
  constexpr std::string_view kRegions = "/regions/";
  if (!s.starts_with(kRegions)) return false;
  s.remove_prefix(kRegions.size());
  const size_t region_end = s.find('/');
  if (region_end == 0 || region_end == std::string_view::npos) return false;
  s.remove_prefix(region_end);
  constexpr std::string_view kAttachments = "/networkAttachments/";
  if (!s.starts_with(kAttachments)) return false;
  s.remove_prefix(kAttachments.size());
  return IsRfc1035Name(s);
}

Status ValidatePscInterfaceConfig(const PscInterfaceConfig& psc) {
  const std::string path = "jobSpec.pscInterfaceConfig";
  if (!psc.network_attachment.empty() && !IsNetworkAttachment(psc.network_attachment)) {
    return InvalidField(path + ".networkAttachment",
                        "networkAttachment is a network attachment name, or "
                        "projects/{project}/regions/{region}/networkAttachments/{name}");
  }
  // DnsPeeringConfig's three fields are REQUIRED in the proto.
  for (size_t i = 0; i < psc.dns_peering_configs.size(); ++i) {
    const std::string p = Index(path + ".dnsPeeringConfigs", i);
    const DnsPeeringConfig& dns = psc.dns_peering_configs[i];
    if (dns.domain.empty()) {
      return InvalidField(p + ".domain", "domain is required: the DNS suffix of the peered zone");
    }
    if (dns.domain.back() != '.') {
      return InvalidField(
          p + ".domain",
          "domain must end with a dot, e.g. corp.example.com. (got \"" + dns.domain + "\")");
    }
    if (dns.target_project.empty()) {
      return InvalidField(p + ".targetProject",
                          "targetProject is required: the project that hosts the DNS zone");
    }
    if (dns.target_network.empty()) {
      return InvalidField(p + ".targetNetwork",
                          "targetNetwork is required: the VPC network in targetProject where "
                          "the zone is visible");
    }
  }
  return Status::Ok();
}

Status ValidateJobSpecFields(const CustomJobSpec& spec) {
  if (!spec.persistent_resource_id.empty() && !IsRfc1035Name(spec.persistent_resource_id)) {
    return InvalidField("jobSpec.persistentResourceId",
                        "persistentResourceId is a bare ID of 1-63 characters matching "
                        "[a-z]([a-z0-9-]{0,61}[a-z0-9])?, not a full resource name");
  }
  if (!spec.network.empty() && !IsNetworkName(spec.network)) {
    return InvalidField("jobSpec.network",
                        "network must be projects/{projectNumber}/global/networks/{network}, "
                        "with a numeric project number");
  }
  if (!spec.service_account.empty() && !LooksLikeEmail(spec.service_account)) {
    return InvalidField("jobSpec.serviceAccount",
                        "serviceAccount must be a service account email, e.g. "
                        "trainer@my-project.iam.gserviceaccount.com");
  }
  if (spec.base_output_directory) {
    const std::string& uri = *spec.base_output_directory;
    if (!uri.starts_with("gs://") || uri.size() == 5) {
      return InvalidField("jobSpec.baseOutputDirectory.outputUriPrefix",
                          "outputUriPrefix must be a Cloud Storage URI (gs://bucket/path)");
    }
  }
  if (spec.psc_interface_config) {
    TY_RETURN_IF_ERROR(ValidatePscInterfaceConfig(*spec.psc_interface_config));
  }
  return Status::Ok();
}

}  // namespace

Status ValidateCustomJob(const CustomJob& job) {
  TY_RETURN_IF_ERROR(ValidateDisplayName(job.display_name));
  TY_RETURN_IF_ERROR(ValidateLabels(job.labels));
  const CustomJobSpec& spec = job.job_spec;
  TY_RETURN_IF_ERROR(ValidateWorkerPools(spec.worker_pool_specs));
  if (spec.scheduling) TY_RETURN_IF_ERROR(ValidateScheduling(*spec.scheduling));
  TY_RETURN_IF_ERROR(ValidateAcrossPools(spec));
  TY_RETURN_IF_ERROR(ValidateJobSpecFields(spec));
  // The simulator's run-time knobs: a bad one is refused now, not ignored at run time.
  TY_RETURN_IF_ERROR(EstimateWorkload(spec).status());
  TY_RETURN_IF_ERROR(UtilizationKnobsOf(spec).status());
  return CheckpointInterval(spec).status();
}

Status ValidateLabelsField(const std::map<std::string, std::string>& labels) {
  return ValidateLabels(labels);
}
Status ValidateMachineSpecField(const MachineSpec& spec, const std::string& path) {
  return ValidateMachineSpec(spec, path);
}
Status ValidateDiskSpecField(const DiskSpec& disk, const std::string& path) {
  return ValidateDiskSpec(disk, path);
}
bool IsResourceIdText(std::string_view s) { return IsRfc1035Name(s); }

}  // namespace trainyard
