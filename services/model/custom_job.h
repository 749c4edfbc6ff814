#pragma once
// The CustomJob resource as the domain sees it: plain values, no JSON, no SQL. Field names follow
// the Vertex AI v1 protos (google.cloud.aiplatform.v1.CustomJob) in snake_case.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "services/model/goodput.h"
#include "services/model/job_run.h"
#include "services/status.h"
#include "services/time.h"

namespace trainyard {

enum class JobState : int {
  kUnspecified = 0,
  kQueued = 1,
  kPending = 2,
  kRunning = 3,
  kSucceeded = 4,
  kFailed = 5,
  kCancelling = 6,
  kCancelled = 7,
  kPaused = 8,
  kExpired = 9,
  kUpdating = 10,
  kPartiallySucceeded = 11,
};

// Proto numbers of google.cloud.aiplatform.v1.AcceleratorType (clients may send either form).
enum class AcceleratorType : int {
  kUnspecified = 0,
  kNvidiaTeslaK80 = 1,
  kNvidiaTeslaP100 = 2,
  kNvidiaTeslaV100 = 3,
  kNvidiaTeslaP4 = 4,
  kNvidiaTeslaT4 = 5,
  kTpuV2 = 6,
  kTpuV3 = 7,
  kNvidiaTeslaA100 = 8,
  kNvidiaA100_80gb = 9,
  kTpuV4Pod = 10,
  kNvidiaL4 = 11,
  kTpuV5Litepod = 12,
  kNvidiaH100_80gb = 13,
  kNvidiaH100Mega80gb = 14,
  kNvidiaH200_141gb = 15,
  kNvidiaB200 = 16,
  kNvidiaGb200 = 17,
  kNvidiaRtxPro6000 = 18,
};

enum class SchedulingStrategy : int {
  kUnspecified = 0,
  kOnDemand = 1,  // deprecated alias of STANDARD
  kLowCost = 2,   // deprecated
  kStandard = 3,
  kSpot = 4,
  kFlexStart = 6,
};

enum class ReservationAffinityType : int {
  kUnspecified = 0,
  kNoReservation = 1,
  kAnyReservation = 2,
  kSpecificReservation = 3,
};

struct EnvVar {
  std::string name;
  std::string value;
};

struct ContainerSpec {
  std::string image_uri;
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::vector<EnvVar> env;
};

struct PythonPackageSpec {
  std::string executor_image_uri;
  std::vector<std::string> package_uris;
  std::string python_module;
  std::vector<std::string> args;
  std::vector<EnvVar> env;
};

struct ReservationAffinity {
  ReservationAffinityType type = ReservationAffinityType::kUnspecified;
  std::string key;
  std::vector<std::string> values;
};

struct MachineSpec {
  std::string machine_type;
  AcceleratorType accelerator_type = AcceleratorType::kUnspecified;
  int32_t accelerator_count = 0;
  std::string tpu_topology;
  std::optional<ReservationAffinity> reservation_affinity;
  std::string gpu_partition_size;
  // v1beta1 only (the v1 decoder rejects them, the v1 encoder leaves them out).
  int32_t multihost_gpu_node_count = 0;  // nodes per replica; 0 = not sent (one node)
  std::string min_gpu_driver_version;    // e.g. "535.104.06"

  // How many machines one replica of this spec occupies.
  int32_t NodesPerReplica() const {
    return multihost_gpu_node_count > 0 ? multihost_gpu_node_count : 1;
  }
};

struct DiskSpec {
  std::string boot_disk_type;
  int32_t boot_disk_size_gb = 0;
};

struct NfsMount {
  std::string server;
  std::string path;
  std::string mount_point;
};

// A Managed Lustre volume mounted into every replica (under /mnt/lustre/<mount_point>).
struct LustreMount {
  std::string instance_ip;
  std::string volume_handle;
  std::string filesystem;
  std::string mount_point;
};

struct WorkerPoolSpec {
  std::optional<ContainerSpec> container_spec;
  std::optional<PythonPackageSpec> python_package_spec;
  std::optional<MachineSpec> machine_spec;
  int64_t replica_count = 0;  // 0 = not sent
  std::optional<DiskSpec> disk_spec;
  std::vector<NfsMount> nfs_mounts;
  std::vector<LustreMount> lustre_mounts;

  // `{}` in workerPoolSpecs: a skipped pool that keeps the positions of the later ones.
  bool IsPlaceholder() const {
    return !container_spec && !python_package_spec && !machine_spec && replica_count == 0 &&
           !disk_spec && nfs_mounts.empty() && lustre_mounts.empty();
  }
};

struct Scheduling {
  std::optional<Duration> timeout;
  bool restart_job_on_worker_restart = false;
  SchedulingStrategy strategy = SchedulingStrategy::kUnspecified;
  bool disable_retries = false;
  std::optional<Duration> max_wait_duration;
};

// Private Service Connect interface: the job's VMs get a NIC in the user's VPC through a network
// attachment, and may resolve names of peered private DNS zones.
struct DnsPeeringConfig {
  std::string domain;  // DNS suffix ending in '.', e.g. "corp.example.com."
  std::string target_project;
  std::string target_network;
};

struct PscInterfaceConfig {
  std::string network_attachment;
  std::vector<DnsPeeringConfig> dns_peering_configs;
};

struct CustomJobSpec {
  std::vector<WorkerPoolSpec> worker_pool_specs;
  std::optional<Scheduling> scheduling;
  std::string service_account;
  std::string network;
  std::vector<std::string> reserved_ip_ranges;
  std::optional<std::string> base_output_directory;  // GcsDestination.outputUriPrefix
  std::string protected_artifact_location_id;
  std::string tensorboard;
  bool enable_web_access = false;
  bool enable_dashboard_access = false;
  std::string experiment;
  std::string experiment_run;
  std::vector<std::string> models;
  std::string persistent_resource_id;
  std::optional<PscInterfaceConfig> psc_interface_config;
};

// google.rpc.Status as embedded in a resource: the rpc code, no HTTP status.
struct RpcStatus {
  int code = 0;  // google.rpc.Code's number, as the wire carries it
  std::string message;
};
// The only way code builds one: by the code's name, never its number.
inline RpcStatus RpcStatusOf(Code code, std::string message) {
  return RpcStatus{static_cast<int>(code), std::move(message)};
}

struct EncryptionSpec {
  std::string kms_key_name;
};

// Trainyard's output-only `trainyard` object: why the job waits, or where it runs and what it has
// cost so far. Clients that do not know it ignore it (gcloud, the official SDKs).
struct PlacedPoolStatus {
  std::string pool_id;
  std::string machine_type;
  std::string consumption_model;  // RESERVATION, ON_DEMAND, SPOT, FLEX_START
  std::string reservation;
  int64_t units = 0;  // nodes, or TPU slices
  std::vector<std::string> nodes;
  // The blocks (racks under a compact placement policy) its nodes span, where the pool has
  // blocks; 0 where it has none. A gang over more than one all-reduces slower
  // (services/jobs/gang_network.h, CrossBlockFactor).
  int blocks = 0;
};

// What the slowest pool of a placement waits for before its replicas start (simulated capacity):
// booting its cold nodes, then pulling the image where it is not cached. What a waiting job's
// client shows ("booting 1 a3-highgpu-8g (300 s), then pulling 10 GB (8 s)").
struct StartupDetail {
  std::string machine_type;
  int64_t boot_nodes = 0;  // the pool's nodes in the placement, when some must boot; else 0
  Duration boot{};
  double image_gb = 0;  // when the image must be pulled; else 0
  Duration image_pull{};
};

struct SchedulingStatus {
  std::string reason_code;  // ADMITTED, NO_CAPACITY, QUOTA_EXCEEDED, …
  std::string reason_message;
  std::optional<int64_t> queue_position;
  int priority = 500;
  std::string zone;
  std::vector<PlacedPoolStatus> pools;
  std::optional<Timestamp> admitted_at;
  Duration startup{};            // the simulated boot and image pull of the placement
  StartupDetail startup_detail;  // its slowest pool's part of it
  // Each run's start-up on the placement, from its nodes being ready to the first step: RUNNING
  // time that trains nothing (goodput's program_startup).
  Duration program_startup{};
  double hourly_price_usd = 0;
  double cost_usd = 0;
  int spot_restarts = 0;  // restarts after spot preemptions (STOCKOUT), at most 6
  int attempt = 0;        // whole-job retries after replica failures, at most 3
  std::vector<ReplicaRun> replicas;
  JobGoodput goodput;  // as of the read
};

struct CustomJob {
  std::string name;  // projects/{number}/locations/{location}/customJobs/{id}
  std::string display_name;
  CustomJobSpec job_spec;
  JobState state = JobState::kUnspecified;
  std::optional<RpcStatus> error;
  std::optional<Timestamp> create_time;
  std::optional<Timestamp> start_time;
  std::optional<Timestamp> end_time;
  std::optional<Timestamp> update_time;
  std::map<std::string, std::string> labels;
  std::optional<EncryptionSpec> encryption_spec;
  std::map<std::string, std::string> web_access_uris;
  std::optional<SchedulingStatus> trainyard;  // output only
};

// The states a job never leaves, spelled once: IsTerminal and the stores' queries read them.
inline constexpr std::array<JobState, 5> kTerminalJobStates = {
    JobState::kSucceeded, JobState::kFailed, JobState::kCancelled, JobState::kExpired,
    JobState::kPartiallySucceeded};

bool IsTerminal(JobState state);

// Vertex's default scheduling.timeout, also FLEX_START's cap.
inline constexpr Duration kDefaultJobTimeout = std::chrono::hours(24 * 7);
// Compute Engine's documented limit: a flex-start VM runs for at most seven days from its
// provisioning, then it is stopped, whatever the job's scheduling.timeout.
inline constexpr Duration kFlexStartMaxRun = std::chrono::hours(24 * 7);
// scheduling.timeout, or the default when it is unset or 0: how long the job may run.
Duration JobTimeout(const CustomJobSpec& spec);
// The first worker pool's image (container or executor image): what the job's nodes pull and
// cache.
std::optional<std::string> PrimaryImage(const CustomJobSpec& spec);

}  // namespace trainyard
