#include "services/jobs/resource_fit.h"

#include <algorithm>

namespace trainyard {
namespace {

bool SameMachine(const MachineSpec& a, const MachineSpec& b) {
  return a.machine_type == b.machine_type && a.accelerator_type == b.accelerator_type &&
         a.accelerator_count == b.accelerator_count && a.tpu_topology == b.tpu_topology;
}

// Vertex's defaults: a pd-ssd boot disk of 100 GB.
DiskSpec Effective(const std::optional<DiskSpec>& disk) {
  DiskSpec out = disk.value_or(DiskSpec{});
  if (out.boot_disk_type.empty()) out.boot_disk_type = "pd-ssd";
  if (out.boot_disk_size_gb == 0) out.boot_disk_size_gb = 100;
  return out;
}

std::string MachineText(const MachineSpec& m) {
  std::string text = m.machine_type;
  if (m.accelerator_count > 0) text += " with " + std::to_string(m.accelerator_count) + " GPUs";
  if (!m.tpu_topology.empty()) text += " (" + m.tpu_topology + ")";
  return text;
}

}  // namespace

Status CheckJobFitsResource(const CustomJobSpec& spec, const PersistentResource& resource) {
  const std::string id = resource.name.substr(resource.name.rfind('/') + 1);
  for (size_t i = 0; i < spec.worker_pool_specs.size(); ++i) {
    const WorkerPoolSpec& wp = spec.worker_pool_specs[i];
    if (wp.IsPlaceholder() || !wp.machine_spec) continue;
    const std::string path = "jobSpec.workerPoolSpecs[" + std::to_string(i) + "]";
    const ResourcePool* match = nullptr;
    std::string machines;
    for (const ResourcePool& pool : resource.resource_pools) {
      machines +=
          (machines.empty() ? "" : ", ") + pool.id + " (" + MachineText(pool.machine_spec) + ")";
      if (match == nullptr && SameMachine(*wp.machine_spec, pool.machine_spec)) match = &pool;
    }
    if (match == nullptr) {
      return InvalidField(path + ".machineSpec", "the job's " + MachineText(*wp.machine_spec) +
                                                     " matches no pool of persistent resource " +
                                                     id + ": " + machines);
    }
    const DiskSpec want = Effective(wp.disk_spec), have = Effective(match->disk_spec);
    if (want.boot_disk_type != have.boot_disk_type ||
        want.boot_disk_size_gb != have.boot_disk_size_gb) {
      return InvalidField(path + ".diskSpec", "the job's boot disk (" + want.boot_disk_type + ", " +
                                                  std::to_string(want.boot_disk_size_gb) +
                                                  " GB) differs from pool " + match->id +
                                                  " of persistent resource " + id + " (" +
                                                  have.boot_disk_type + ", " +
                                                  std::to_string(have.boot_disk_size_gb) + " GB)");
    }
    const int64_t most =
        std::max(match->replica_count,
                 match->autoscaling_spec ? match->autoscaling_spec->max_replica_count : int64_t{0});
    const int64_t replicas = std::max<int64_t>(wp.replica_count, 1);
    if (replicas > most) {
      return InvalidField(path + ".replicaCount", "the job asks " + std::to_string(replicas) +
                                                      " replicas but pool " + match->id +
                                                      " of persistent resource " + id +
                                                      " holds at most " + std::to_string(most));
    }
  }
  return Status::Ok();
}

}  // namespace trainyard
