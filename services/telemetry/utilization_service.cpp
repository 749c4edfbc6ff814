#include "services/telemetry/utilization_service.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "services/fleet/node_state.h"
#include "services/jobs/catalog.h"
#include "services/jobs/job_service.h"

namespace trainyard {
namespace {

constexpr double kGib = 1024.0 * 1024.0 * 1024.0;

// What one host of `machine_type` carries, for a job whose primary pool asks for `spec` (which
// names the GPUs of an N1 host and the generation of a cloud-tpu host).
HostShape ShapeOf(const std::string& machine_type, const MachineSpec* spec) {
  HostShape shape;
  const MachineType* m = FindMachineType(machine_type);
  if (m == nullptr && spec != nullptr) m = FindMachineType(spec->machine_type);
  if (m == nullptr) return shape;
  shape.nic_bytes_per_second = m->network_gbps * 1e9 / 8;
  if (m->is_tpu) {
    std::string family(m->tpu_family);
    if (family.empty()) {  // cloud-tpu: a v2-8 or v3-8 host, four chips
      family = spec != nullptr && spec->accelerator_type == AcceleratorType::kTpuV3 ? "v3" : "v2";
    }
    shape.tpu = true;
    shape.accelerator = "TPU " + family;
    shape.chips = m->tpu_chips_per_host;
    shape.chip_memory_bytes = TpuChipMemoryGib(family).value_or(0) * kGib;
    return shape;
  }
  AcceleratorType type = m->accelerator;
  int count = m->accelerator_count;
  if (type == AcceleratorType::kUnspecified && spec != nullptr) {
    type = spec->accelerator_type;
    count = spec->accelerator_count;
  }
  if (type == AcceleratorType::kUnspecified || count <= 0) return shape;  // CPU only
  shape.accelerator = AcceleratorName(type);
  shape.chips = count;
  shape.chip_memory_bytes = GpuMemoryGib(type).value_or(0) * kGib;
  return shape;
}

const MachineSpec* PrimaryMachine(const CustomJobSpec& spec) {
  for (const WorkerPoolSpec& wp : spec.worker_pool_specs) {
    if (!wp.IsPlaceholder() && wp.machine_spec) return &*wp.machine_spec;
  }
  return nullptr;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t mid = v.size() / 2;
  return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

}  // namespace

JobUtilization UtilizationService::Build(const JobRecord& record,
                                         const std::vector<const NodeRecord*>& nodes,
                                         Timestamp now) const {
  JobUtilization out;
  out.name = record.job.name;
  out.state = record.job.state;
  out.time = now;
  if (record.job.state != JobState::kRunning || nodes.empty()) return out;
  const MachineSpec* spec = PrimaryMachine(record.job.job_spec);
  for (const NodeRecord* node : nodes) {
    const CapacityPool* pool = fleet_.FindPool(node->pool_id);
    const int hosts = pool != nullptr ? std::max(pool->hosts_per_unit, 1) : 1;
    const std::string name = NodeName(node->pool_id, node->ordinal);
    for (int k = 0; k < hosts; ++k) {
      HostUtilization h;
      h.host = hosts == 1 ? name : name + "/host-" + std::to_string(k);
      h.zone = node->zone;
      h.machine_type = node->machine_type;
      h.shape = ShapeOf(node->machine_type, spec);
      out.hosts.push_back(std::move(h));
    }
  }
  // Knobs were validated at create; a job stored before they existed runs on the defaults.
  auto parsed = UtilizationKnobsOf(record.job.job_spec);
  const UtilizationKnobs knobs = parsed.ok() ? *parsed : UtilizationKnobs{};
  GangRun run;
  run.hosts = static_cast<int>(out.hosts.size());
  for (const HostUtilization& h : out.hosts) run.total_chips += h.shape.chips;
  run.running_for =
      record.state_since && *record.state_since < now ? now - *record.state_since : Duration{};
  run.checkpoint_interval = record.checkpoint_interval;
  run.seed = static_cast<uint64_t>(record.id);
  std::vector<double> duty, tensor;
  for (size_t i = 0; i < out.hosts.size(); ++i) {
    HostUtilization& h = out.hosts[i];
    h.sample = SimulateHost(h.shape, knobs, run, static_cast<int>(i), now);
    duty.push_back(h.sample.duty_cycle);
    tensor.push_back(h.sample.tensor_core_utilization);
  }
  out.median_duty_cycle = Median(duty);
  out.median_tensor_core_utilization = Median(tensor);
  if (out.hosts.size() >= 3) {
    for (HostUtilization& h : out.hosts) {
      h.outlier = std::fabs(h.sample.duty_cycle - out.median_duty_cycle) > kOutlierDistance ||
                  std::fabs(h.sample.tensor_core_utilization - out.median_tensor_core_utilization) >
                      kOutlierDistance;
    }
  }
  return out;
}

StatusOr<JobUtilization> UtilizationService::ForJob(const JobRef& ref) {
  TY_ASSIGN_OR_RETURN(JobKey key, ResolveJobRef(projects_, ref));
  auto record = jobs_.Get(key.project_number, ref.parent.location, key.id);
  if (!record.ok() && record.status().code() == Code::kNotFound) return JobNotFound(ref);
  TY_RETURN_IF_ERROR(record.status());
  std::vector<NodeRecord> nodes;
  if (record->job.state == JobState::kRunning) {
    TY_ASSIGN_OR_RETURN(nodes, admin_.NodesHeldByJobs(key.id));
  }
  std::vector<const NodeRecord*> held;
  for (const NodeRecord& n : nodes) held.push_back(&n);
  return Build(*record, held, clock_.Now());
}

StatusOr<std::vector<JobUtilization>> UtilizationService::Running() {
  TY_ASSIGN_OR_RETURN(std::vector<NodeRecord> nodes, admin_.NodesHeldByJobs(std::nullopt));
  std::map<int64_t, std::vector<const NodeRecord*>> by_job;
  for (const NodeRecord& n : nodes) by_job[*n.job_id].push_back(&n);
  std::vector<int64_t> ids;
  for (const auto& [id, held] : by_job) ids.push_back(id);
  TY_ASSIGN_OR_RETURN(std::vector<JobRecord> records, jobs_.ByIds(ids));
  const Timestamp now = clock_.Now();
  std::vector<JobUtilization> out;
  for (const JobRecord& record : records) {
    if (record.job.state != JobState::kRunning) continue;
    out.push_back(Build(record, by_job[record.id], now));
  }
  return out;
}

}  // namespace trainyard
