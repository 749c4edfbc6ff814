#include "services/runtime/replica_plan.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string_view>
#include <utility>

#include "services/jobs/catalog.h"
#include "services/json_text.h"

namespace trainyard {
namespace {

// The four roles of docs/wire-format.md ("Worker pools and their roles"); a fifth pool would have
// no role to play.
constexpr size_t kMaxPools = 4;
constexpr int kEvaluatorPool = 3;
// Same bound as the validator: it also keeps a corrupt stored job from allocating without limit.
constexpr int64_t kMaxReplicaCount = 1000;
// cloud-tpu (v2/v3) sizes a slice in TensorCores; one host carries 8 (4 chips, 2 cores each).
constexpr int kCloudTpuCoresPerHost = 8;

std::string PoolPath(size_t pool) {
  return "jobSpec.workerPoolSpecs[" + std::to_string(pool) + "]";
}

// splitmix64 (Steele, Lea, Flood 2014): a fixed integer mix, so the hash is the same on every
// run, compiler and machine, and close job ids still give unrelated hostnames.
uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// "host:port"; an IPv6 literal is bracketed so the port stays unambiguous ("[::1]:2222").
std::string HostPort(const ReplicaEndpoint& e) {
  const bool v6 = e.host.find(':') != std::string::npos;
  return (v6 ? "[" + e.host + "]" : e.host) + ":" + std::to_string(e.port);
}

// One worker pool as the plan sees it, after checking that it can be planned.
struct PoolPlan {
  int pool = 0;
  bool tpu = false;
  int replicas = 0;         // processes to run: replicaCount, or the hosts of its TPU slices
  int vertex_replicas = 0;  // as Vertex counts them: replicaCount (a TPU slice is one)
  int slices = 0;           // TPU: the slices it runs (replicaCount), each of hosts_per_slice
  int hosts_per_slice = 1;
  int local_world_size = 1;
  std::string image_uri;
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::vector<std::string> package_uris;
  const std::vector<EnvVar>* user_env = nullptr;
  std::vector<std::string> hostnames;
  std::vector<ReplicaEndpoint> endpoints;
};

Status PlanTask(const WorkerPoolSpec& wp, const std::string& path, PoolPlan& plan) {
  if (wp.container_spec) {
    const ContainerSpec& c = *wp.container_spec;
    if (c.image_uri.empty()) {
      return InvalidField(path + ".containerSpec.imageUri", "the container image is required");
    }
    plan.image_uri = c.image_uri;
    plan.command = c.command;
    plan.args = c.args;
    plan.user_env = &c.env;
    return Status::Ok();
  }
  if (wp.python_package_spec) {
    const PythonPackageSpec& p = *wp.python_package_spec;
    if (p.executor_image_uri.empty()) {
      return InvalidField(path + ".pythonPackageSpec.executorImageUri",
                          "the executor image is required");
    }
    if (p.python_module.empty()) {
      return InvalidField(path + ".pythonPackageSpec.pythonModule",
                          "the Python module to run is required");
    }
    plan.image_uri = p.executor_image_uri;
    // What Vertex's prebuilt executors run after installing packageUris.
    plan.command = {"python3", "-m", p.python_module};
    plan.args = p.args;
    plan.package_uris = p.package_uris;
    plan.user_env = &p.env;
    return Status::Ok();
  }
  return InvalidField(path, "a worker pool needs containerSpec or pythonPackageSpec");
}

Status PlanMachine(const WorkerPoolSpec& wp, const std::string& path, PoolPlan& plan) {
  if (!wp.machine_spec) return InvalidField(path + ".machineSpec", "machineSpec is required");
  const MachineSpec& ms = *wp.machine_spec;
  const MachineType* machine = FindMachineType(ms.machine_type);
  if (machine == nullptr) {
    return InvalidField(path + ".machineSpec.machineType",
                        "unknown machine type \"" + ms.machine_type + "\"");
  }
  if (wp.replica_count < 0 || wp.replica_count > kMaxReplicaCount) {
    return InvalidField(path + ".replicaCount", "replicaCount must be between 1 and 1000 (got " +
                                                    std::to_string(wp.replica_count) + ")");
  }
  const int replica_count = static_cast<int>(std::max<int64_t>(wp.replica_count, 1));
  if (!machine->is_tpu) {
    plan.replicas = replica_count;
    plan.vertex_replicas = replica_count;
    // acceleratorCount names attached GPUs (N1); a2/a3/a4/g2 carry theirs built in.
    plan.local_world_size = ms.accelerator_count > 0         ? ms.accelerator_count
                            : machine->accelerator_count > 0 ? machine->accelerator_count
                                                             : 1;
    return Status::Ok();
  }
  // cloud-tpu (v2/v3) runs one slice, as Vertex allows; the others one slice per replica, the
  // slices told apart by MEGASCALE_SLICE_ID (Multislice).
  if (replica_count != 1 && machine->tpu_family.empty()) {
    return InvalidField(path + ".replicaCount",
                        "a cloud-tpu worker pool runs one slice: replicaCount must be 1 (got " +
                            std::to_string(wp.replica_count) + ")");
  }
  int hosts = 1;
  if (machine->tpu_family.empty()) {  // cloud-tpu: sized by acceleratorCount in TensorCores
    hosts = std::max(1, (ms.accelerator_count + kCloudTpuCoresPerHost - 1) / kCloudTpuCoresPerHost);
  } else {
    StatusOr<TpuSlice> slice = ResolveTpuTopology(*machine, ms.tpu_topology);
    if (!slice.ok()) {
      const auto& v = slice.status().violations();
      return InvalidField(path + ".machineSpec.tpuTopology",
                          v.empty() ? slice.status().message() : v.front().description);
    }
    hosts = slice->hosts;
  }
  plan.tpu = true;
  plan.slices = replica_count;
  plan.hosts_per_slice = hosts;
  plan.replicas = hosts * replica_count;
  plan.vertex_replicas = replica_count;
  plan.local_world_size = machine->tpu_chips_per_host;
  return Status::Ok();
}

// The value of the last entry named `name` (the one a process would see), if any.
std::optional<std::string> LastValue(const std::vector<EnvVar>& env, std::string_view name) {
  for (auto it = env.rbegin(); it != env.rend(); ++it) {
    if (it->name == name) return it->value;
  }
  return std::nullopt;
}

// Names the user may set over ours (see the header for why).
bool UserWins(std::string_view name) {
  return name == "LOCAL_WORLD_SIZE" || name == "AIP_MODEL_DIR" || name == "AIP_CHECKPOINT_DIR" ||
         name == "AIP_TENSORBOARD_LOG_DIR";
}

// Ours first, then the user's; one entry per name we set. For a name we own the user's entry is
// dropped; for one the user wins, ours is.
std::vector<EnvVar> MergeEnv(const std::vector<EnvVar>& ours, const std::vector<EnvVar>& user) {
  std::vector<EnvVar> out;
  out.reserve(ours.size() + user.size());
  for (const EnvVar& e : ours) {
    if (UserWins(e.name) && LastValue(user, e.name)) continue;
    out.push_back(e);
  }
  for (const EnvVar& e : user) {
    if (!UserWins(e.name) && LastValue(ours, e.name)) continue;
    out.push_back(e);
  }
  return out;
}

// `base` + `leaf` + "/", with exactly one slash between them.
std::string Under(const std::string& base, std::string_view leaf) {
  std::string out = base;
  if (out.empty() || out.back() != '/') out.push_back('/');
  out += leaf;
  out.push_back('/');
  return out;
}

std::string_view TfTaskType(int pool) {
  switch (pool) {
    case 0:
      return "chief";
    case 1:
      return "worker";
    case 2:
      return "ps";
    default:
      return "evaluator";
  }
}

// `"key":["h:p",…]` for one pool's endpoints.
void AppendPoolList(std::string& out, std::string_view key, const PoolPlan& p) {
  AppendJsonString(out, key);
  out += ":[";
  for (size_t i = 0; i < p.endpoints.size(); ++i) {
    if (i > 0) out.push_back(',');
    AppendJsonString(out, HostPort(p.endpoints[i]));
  }
  out.push_back(']');
}

// The "task" object of CLUSTER_SPEC and TF_CONFIG. "trial" is the hyperparameter-tuning trial id,
// empty outside tuning (we run no tuning jobs) but present, as in Vertex's CLUSTER_SPEC.
std::string TaskJson(std::string_view type, int index) {
  std::string out = "{\"type\":";
  AppendJsonString(out, type);
  out += ",\"index\":" + std::to_string(index) + ",\"trial\":\"\"}";
  return out;
}

}  // namespace

std::string JobHostHash(int64_t job_id) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx",
                static_cast<unsigned long long>(SplitMix64(static_cast<uint64_t>(job_id))));
  return std::string(buf + 6, 10);  // 40 bits: ample to tell jobs apart within one cluster
}

StatusOr<std::vector<Replica>> PlanReplicas(const CustomJob& job,
                                            const ReplicaPlanOptions& options) {
  const std::vector<WorkerPoolSpec>& specs = job.job_spec.worker_pool_specs;
  if (specs.empty()) {
    return InvalidField("jobSpec.workerPoolSpecs", "at least one worker pool is required");
  }
  if (specs.size() > kMaxPools) {
    return InvalidField("jobSpec.workerPoolSpecs",
                        "at most 4 worker pools are allowed (primary, workers, parameter servers "
                        "or reduction server, evaluators); got " +
                            std::to_string(specs.size()));
  }
  if (specs[0].IsPlaceholder()) {
    return InvalidField(PoolPath(0),
                        "the primary pool (workerPoolSpecs[0]) must not be empty: it runs the "
                        "primary replica, whose exit decides the job");
  }

  // Pools that run something, each checked and sized.
  std::vector<PoolPlan> pools;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].IsPlaceholder()) continue;
    PoolPlan p;
    p.pool = static_cast<int>(i);
    const std::string path = PoolPath(i);
    TY_RETURN_IF_ERROR(PlanTask(specs[i], path, p));
    TY_RETURN_IF_ERROR(PlanMachine(specs[i], path, p));
    pools.push_back(std::move(p));
  }

  const std::string hash = JobHostHash(options.job_id);
  for (PoolPlan& p : pools) {
    for (int i = 0; i < p.replicas; ++i) {
      std::string hostname = "cmle-training-workerpool" + std::to_string(p.pool) + "-" + hash +
                             "-" + std::to_string(i);
      ReplicaEndpoint ep =
          options.endpoint ? options.endpoint(p.pool, i) : ReplicaEndpoint{hostname, 2222};
      if (ep.host.empty() || ep.port < 1 || ep.port > 65535) {
        return Internal("replica endpoint for workerpool" + std::to_string(p.pool) + "-" +
                        std::to_string(i) + " is invalid (host \"" + ep.host + "\", port " +
                        std::to_string(ep.port) + ")");
      }
      p.hostnames.push_back(std::move(hostname));
      p.endpoints.push_back(std::move(ep));
    }
  }

  // Pool 0 is never a placeholder (checked above), so pools.front() is the primary's pool.
  const PoolPlan& primary_pool = pools.front();
  const std::string& master_addr = primary_pool.endpoints.front().host;
  const std::string master_port = LastValue(*primary_pool.user_env, "MASTER_PORT")
                                      .value_or(std::to_string(options.master_port));

  int world_size = 0;
  int vertex_replicas = 0;
  for (const PoolPlan& p : pools) {
    if (p.pool != kEvaluatorPool) world_size += p.replicas;
    vertex_replicas += p.vertex_replicas;
  }
  // TF_CONFIG's chief and workers are replicas of GPU or CPU pools, not TPU slices.
  const bool multi_replica =
      vertex_replicas > 1 &&
      std::none_of(pools.begin(), pools.end(), [](const PoolPlan& p) { return p.tpu; });

  std::string cluster_spec_cluster = "{";
  std::string tf_cluster = "{";
  for (const PoolPlan& p : pools) {
    if (cluster_spec_cluster.size() > 1) cluster_spec_cluster.push_back(',');
    AppendPoolList(cluster_spec_cluster, "workerpool" + std::to_string(p.pool), p);
    if (p.pool == kEvaluatorPool) continue;  // TF never lists evaluators
    if (tf_cluster.size() > 1) tf_cluster.push_back(',');
    AppendPoolList(tf_cluster, TfTaskType(p.pool), p);
  }
  cluster_spec_cluster.push_back('}');
  tf_cluster.push_back('}');
  const std::string job_json = options.job_spec_json.empty() ? "{}" : options.job_spec_json;

  std::optional<std::string> base;
  if (job.job_spec.base_output_directory && !job.job_spec.base_output_directory->empty()) {
    base = *job.job_spec.base_output_directory;
  }

  // Multislice (more than one TPU slice): slices are numbered across the pools, and every host
  // learns the coordinator (slice 0's first host) as XPK and JobSet tell MaxText and JAX.
  int total_slices = 0;
  for (const PoolPlan& p : pools) total_slices += p.slices;
  const std::string megascale_port = "8081";

  std::vector<Replica> out;
  int rank_offset = 0;
  int slice_offset = 0;
  for (const PoolPlan& p : pools) {
    // TPU_WORKER_HOSTNAMES: the hosts of the replica's own slice.
    std::vector<std::string> tpu_hostnames(static_cast<size_t>(p.slices));
    for (int i = 0; p.tpu && i < p.replicas; ++i) {
      std::string& list = tpu_hostnames[static_cast<size_t>(i / p.hosts_per_slice)];
      if (!list.empty()) list.push_back(',');
      list += p.endpoints[static_cast<size_t>(i)].host;
    }
    for (int i = 0; i < p.replicas; ++i) {
      Replica r;
      r.pool = p.pool;
      r.index = i;
      r.task_name = "workerpool" + std::to_string(p.pool) + "-" + std::to_string(i);
      r.hostname = p.hostnames[i];
      r.endpoint = p.endpoints[i];
      r.primary = p.pool == 0 && i == 0;
      r.image_uri = p.image_uri;
      r.command = p.command;
      r.args = p.args;
      r.package_uris = p.package_uris;

      std::vector<EnvVar> env;
      std::string cluster_spec =
          "{\"cluster\":" + cluster_spec_cluster + ",\"environment\":\"cloud\",\"task\":" +
          TaskJson("workerpool" + std::to_string(p.pool), i) + ",\"job\":" + job_json + "}";
      env.push_back({"CLUSTER_SPEC", std::move(cluster_spec)});
      if (multi_replica) {
        env.push_back({"TF_CONFIG", "{\"cluster\":" + tf_cluster +
                                        ",\"task\":" + TaskJson(TfTaskType(p.pool), i) +
                                        ",\"environment\":\"cloud\",\"job\":" + job_json + "}"});
      }
      env.push_back({"CLOUD_ML_PROJECT_ID", std::to_string(options.project_number)});
      env.push_back({"CLOUD_ML_JOB_ID", std::to_string(options.job_id)});
      if (base) {
        env.push_back({"AIP_MODEL_DIR", Under(*base, "model")});
        env.push_back({"AIP_CHECKPOINT_DIR", Under(*base, "checkpoints")});
        env.push_back({"AIP_TENSORBOARD_LOG_DIR", Under(*base, "logs")});
      }
      env.push_back({"MASTER_ADDR", master_addr});
      env.push_back({"MASTER_PORT", master_port});
      env.push_back({"WORLD_SIZE", std::to_string(world_size)});
      if (p.pool != kEvaluatorPool) {
        env.push_back({"RANK", std::to_string(rank_offset + i)});
        env.push_back({"NODE_RANK", std::to_string(rank_offset + i)});
      }
      env.push_back({"LOCAL_WORLD_SIZE", std::to_string(p.local_world_size)});
      if (p.tpu) {
        const int slice = i / p.hosts_per_slice;
        env.push_back({"TPU_WORKER_ID", std::to_string(i % p.hosts_per_slice)});
        env.push_back({"TPU_WORKER_HOSTNAMES", tpu_hostnames[static_cast<size_t>(slice)]});
        if (total_slices > 1) {
          env.push_back({"MEGASCALE_COORDINATOR_ADDRESS",
                         pools.front().endpoints.front().host + ":" + megascale_port});
          env.push_back({"MEGASCALE_NUM_SLICES", std::to_string(total_slices)});
          env.push_back({"MEGASCALE_SLICE_ID", std::to_string(slice_offset + slice)});
          env.push_back({"MEGASCALE_PORT", megascale_port});
        }
      }
      r.env = MergeEnv(env, *p.user_env);
      out.push_back(std::move(r));
    }
    if (p.pool != kEvaluatorPool) rank_offset += p.replicas;
    slice_offset += p.slices;
  }
  return out;
}

Status RequireCommands(const std::vector<Replica>& replicas, std::string_view runs) {
  for (const Replica& r : replicas) {
    if (r.command.empty()) {
      return InvalidArgument("jobSpec.workerPoolSpecs[" + std::to_string(r.pool) +
                             "].containerSpec.command: " + std::string(runs) +
                             " and does not pull images; set command (and args)");
    }
  }
  return Status::Ok();
}

}  // namespace trainyard
