#include "services/scheduler/scheduler_job.h"

#include <algorithm>
#include <charconv>

#include "services/fleet/node_state.h"
#include "services/jobs/catalog.h"
#include "services/model/duration_text.h"
#include "services/scheduler/workload_key.h"

namespace trainyard {
namespace {

std::string Upper(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return out;
}

std::string LastSegment(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

template <typename Demands>
void AddDemand(Demands& demands, const std::string& metric, int64_t amount) {
  for (QuotaDemand& d : demands) {
    if (d.metric == metric) {
      d.amount += amount;
      return;
    }
  }
  demands.push_back({metric, amount});
}

}  // namespace

bool UsesPreemptibleQuota(ConsumptionModel model) {
  return model == ConsumptionModel::kSpot || model == ConsumptionModel::kFlexStart;
}

std::string QuotaMetricFor(const std::string& metric, ConsumptionModel model) {
  return UsesPreemptibleQuota(model) ? PreemptibleQuotaMetric(metric) : metric;
}

std::string PreemptibleQuotaMetric(const std::string& metric) { return "PREEMPTIBLE_" + metric; }

StatusOr<SchedulerJob> MakeSchedulerJob(int64_t id, int64_t version, const std::string& project_id,
                                        const std::string& region, const CustomJob& job,
                                        std::optional<Timestamp> queued_since) {
  SchedulerJob out;
  out.id = id;
  out.version = version;
  out.project_id = project_id;
  out.region = region;
  TY_ASSIGN_OR_RETURN(out.priority, ParsePriorityLabel(job.labels));
  out.queue_time = job.create_time.value_or(Timestamp{});
  if (queued_since && *queued_since > out.queue_time) out.requeued_at = *queued_since;
  const CustomJobSpec& spec = job.job_spec;
  const Duration timeout = JobTimeout(spec);
  if (spec.scheduling) {
    out.strategy = spec.scheduling->strategy;
    if (out.strategy == SchedulingStrategy::kFlexStart) {
      // Vertex: maxWaitDuration defaults to 24h; 0 means wait forever.
      Duration wait = spec.scheduling->max_wait_duration.value_or(std::chrono::hours(24));
      if (wait.count() > 0) {
        out.dws_deadline =
            out.DwsRequestTime() + std::chrono::duration_cast<std::chrono::microseconds>(wait);
      }
    }
  }
  out.expected_runtime = timeout;
  // A malformed interval is refused at create; a job stored before that rule takes the default.
  if (auto interval = CheckpointInterval(spec); interval.ok()) out.checkpoint_interval = *interval;
  if (auto save = EmergencyCheckpointTime(spec); save.ok()) out.emergency_checkpoint = *save;
  if (auto it = job.labels.find(std::string(kExpectedRuntimeLabel)); it != job.labels.end()) {
    if (auto d = ParseDurationText(it->second); d && *d < timeout) out.expected_runtime = *d;
  }

  out.image_uri = PrimaryImage(spec).value_or("");
  out.shape = project_id + "|" + region + "|" + std::to_string(static_cast<int>(out.strategy)) +
              "|" + std::to_string(out.priority);
  for (size_t i = 0; i < spec.worker_pool_specs.size(); ++i) {
    const WorkerPoolSpec& wp = spec.worker_pool_specs[i];
    if (wp.IsPlaceholder() || !wp.machine_spec) continue;
    const MachineSpec& ms = *wp.machine_spec;
    const MachineType* machine = FindMachineType(ms.machine_type);
    if (machine == nullptr) {
      return InvalidField("jobSpec.workerPoolSpecs[" + std::to_string(i) + "].machineSpec",
                          "unknown machine type " + ms.machine_type);
    }
    // A multi-host GPU replica (v1beta1 multihostGpuNodeCount) takes that many whole nodes.
    int64_t replicas = std::max<int64_t>(wp.replica_count, 1) * ms.NodesPerReplica();
    GangPool gp;
    gp.machine_type = ms.machine_type;
    gp.units = replicas;
    if (IsCloudTpu(*machine)) {
      // Sized by its cores: 8 is one v2-8/v3-8 host, more a pod slice. Quota counts cores.
      gp.attached = ms.accelerator_type;
      gp.attached_count = ms.accelerator_count;
      gp.tpu_chips = ms.accelerator_count / 2;
      gp.quota_metric = AcceleratorName(ms.accelerator_type);
      gp.quota_amount = int64_t{ms.accelerator_count} * replicas;
    } else if (machine->is_tpu) {
      TY_ASSIGN_OR_RETURN(TpuSlice slice, ResolveTpuTopology(*machine, ms.tpu_topology));
      gp.tpu_chips = slice.chips;
      gp.quota_metric = "TPU_" + Upper(machine->tpu_family);
      gp.quota_amount = slice.chips * replicas;
    } else if (machine->accelerator != AcceleratorType::kUnspecified) {
      gp.quota_metric = AcceleratorName(machine->accelerator);
      gp.quota_amount = int64_t{machine->accelerator_count} * replicas;
    } else if (ms.accelerator_type != AcceleratorType::kUnspecified && ms.accelerator_count > 0) {
      gp.attached = ms.accelerator_type;
      gp.attached_count = ms.accelerator_count;
      gp.quota_metric = AcceleratorName(ms.accelerator_type);
      gp.quota_amount = int64_t{ms.accelerator_count} * replicas;
    } else {
      gp.cpu_only = true;
      gp.quota_metric = "CPUS";
      gp.quota_amount = int64_t{machine->vcpus} * replicas;
    }
    AddDemand(out.quota, gp.quota_metric, gp.quota_amount);
    if (ms.reservation_affinity) {
      out.affinity = ms.reservation_affinity->type;
      for (const std::string& v : ms.reservation_affinity->values) {
        out.reservations.push_back(LastSegment(v));
      }
    }
    // The quota demand names attached GPUs too: n1-standard-8 with 2 T4s is another shape than
    // n1-standard-8 alone.
    out.shape += "|" + gp.machine_type + ":" + std::to_string(gp.tpu_chips) + ":" +
                 std::to_string(gp.units) + ":" + gp.quota_metric + ":" +
                 std::to_string(gp.quota_amount);
    out.pools.push_back(std::move(gp));
  }
  out.shape += "|" + std::to_string(static_cast<int>(out.affinity)) + "|" +
               std::to_string(out.expected_runtime.count());
  if (!spec.persistent_resource_id.empty()) {
    out.on_resource = ResourceKey(project_id, region, spec.persistent_resource_id);
    out.shape += "|on:" + out.on_resource;
  }
  for (const std::string& r : out.reservations) out.shape += "," + r;
  return out;
}

std::vector<std::pair<int, int64_t>> BlockUnitsOf(const CapacityPool& pool,
                                                  const std::vector<std::string>& nodes) {
  std::vector<std::pair<int, int64_t>> out;
  if (pool.elastic || pool.block_nodes <= 0) return out;
  const int hosts = std::max(1, pool.hosts_per_unit);
  const int per_block = std::max(1, pool.block_nodes / hosts);
  std::map<int, int64_t> nodes_in;
  for (const std::string& name : nodes) {
    if (std::optional<int64_t> ordinal = NodeOrdinal(name)) {
      ++nodes_in[static_cast<int>(*ordinal / hosts / per_block)];
    }
  }
  for (const auto& [block, n] : nodes_in) out.push_back({block, n / hosts});
  return out;
}

RunningJob MakeRunningJob(const SchedulerJob& job, const Placement& placement, const Fleet& fleet,
                          Timestamp admitted_at, std::optional<Timestamp> running_since) {
  RunningJob r;
  r.running_since = running_since;
  r.checkpoint_interval = job.checkpoint_interval;
  r.emergency_checkpoint = job.emergency_checkpoint;
  r.id = job.id;
  r.project_id = job.project_id;
  r.region = job.region;
  r.priority = job.priority;
  r.admitted_at = admitted_at;
  r.expected_end =
      admitted_at + std::chrono::duration_cast<std::chrono::microseconds>(job.expected_runtime);
  r.placement = placement;
  r.on_resource = job.on_resource;
  if (!job.on_resource.empty()) return r;  // the resource's own hold counts the quota
  for (size_t i = 0; i < job.pools.size() && i < placement.pools.size(); ++i) {
    ConsumptionModel m = fleet.pools[placement.pools[i].pool].model;
    AddDemand(r.quota, QuotaMetricFor(job.pools[i].quota_metric, m), job.pools[i].quota_amount);
  }
  return r;
}

Duration WorkLostIfStopped(const RunningJob& job, Timestamp now, Duration grace) {
  if (!job.running_since || now <= *job.running_since) return Duration{};
  if (grace > Duration{} && job.emergency_checkpoint && *job.emergency_checkpoint <= grace) {
    return Duration{};
  }
  const Duration ran = now - *job.running_since;
  return job.checkpoint_interval > Duration{} ? ran % job.checkpoint_interval : ran;
}

std::string ResourceKey(const std::string& project_id, const std::string& region,
                        const std::string& resource_id) {
  return project_id + "/" + region + "/" + resource_id;
}

StatusOr<SchedulerJob> MakeResourceHolder(int64_t uid, int64_t version,
                                          const std::string& project_id, const std::string& region,
                                          const PersistentResource& resource) {
  CustomJob as_job;
  as_job.labels = resource.labels;
  as_job.create_time = resource.create_time;
  for (const ResourcePool& pool : resource.resource_pools) {
    WorkerPoolSpec& wp = as_job.job_spec.worker_pool_specs.emplace_back();
    wp.machine_spec = pool.machine_spec;
    wp.replica_count = pool.replica_count;
    wp.disk_spec = pool.disk_spec;
  }
  TY_ASSIGN_OR_RETURN(SchedulerJob holder,
                      MakeSchedulerJob(HoldKey(uid), version, project_id, region, as_job));
  // It holds its nodes until deleted: backfill must never plan on them coming back.
  holder.expected_runtime = std::chrono::hours(24 * 365 * 100);
  holder.shape = "resource|" + std::to_string(uid);
  return holder;
}

}  // namespace trainyard
