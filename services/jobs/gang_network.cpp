#include "services/jobs/gang_network.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include "services/jobs/catalog.h"

namespace trainyard {
namespace {

// workload_model's default MFU for GPUs, so the share and the compute it divides agree.
constexpr double kGpuMfu = 0.4;

const std::string* EnvValue(const CustomJobSpec& spec, std::string_view name) {
  if (spec.worker_pool_specs.empty()) return nullptr;
  const WorkerPoolSpec& primary = spec.worker_pool_specs[0];
  const std::vector<EnvVar>* env = nullptr;
  if (primary.container_spec) env = &primary.container_spec->env;
  if (primary.python_package_spec) env = &primary.python_package_spec->env;
  if (env == nullptr) return nullptr;
  for (const EnvVar& var : *env) {
    if (var.name == name) return &var.value;
  }
  return nullptr;
}

// A positive number the env gives, else nullopt (the validator reports bad values at create).
std::optional<double> EnvNumber(const CustomJobSpec& spec, std::string_view name) {
  const std::string* text = EnvValue(spec, name);
  if (text == nullptr) return std::nullopt;
  double value = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || end != text->data() + text->size() || !(value > 0)) return std::nullopt;
  return value;
}

}  // namespace

std::optional<double> GpuNetworkGbps(std::string_view machine_type) {
  if (machine_type == "a3-highgpu-8g") return 800;   // 4 × 200 Gb/s, GPUDirect-TCPX
  if (machine_type == "a3-megagpu-8g") return 1600;  // 8 × 200 Gb/s, GPUDirect-TCPXO
  if (machine_type == "a3-ultragpu-8g" || machine_type == "a4-highgpu-8g") {
    return 3200;  // 8 × 400 Gb/s ConnectX-7, GPUDirect RDMA
  }
  const MachineType* machine = FindMachineType(machine_type);
  if (machine == nullptr || machine->is_tpu || machine->network_gbps <= 0) return std::nullopt;
  return machine->network_gbps;
}

double CrossBlockFactor(int blocks) {
  return blocks <= 1 ? 1.0 : 1.0 + std::log2(static_cast<double>(blocks));
}

double GangCommShare(const CustomJobSpec& spec) {
  int64_t nodes = 0;
  const MachineSpec* first = nullptr;
  for (const WorkerPoolSpec& wp : spec.worker_pool_specs) {
    if (wp.IsPlaceholder() || !wp.machine_spec) continue;
    const MachineSpec& ms = *wp.machine_spec;
    const MachineType* machine = FindMachineType(ms.machine_type);
    if (machine == nullptr || machine->is_tpu) continue;
    const bool gpus = machine->accelerator_count > 0 || ms.accelerator_count > 0;
    if (!gpus) continue;
    nodes += std::max<int64_t>(wp.replica_count, 1) * ms.NodesPerReplica();
    if (first == nullptr) first = &ms;
  }
  if (nodes < 2 || first == nullptr) return 0;
  const MachineType* machine = FindMachineType(first->machine_type);
  AcceleratorType type = machine->accelerator;
  double gpus_per_node = machine->accelerator_count;
  if (type == AcceleratorType::kUnspecified) {  // N1 with attached GPUs
    type = first->accelerator_type;
    gpus_per_node = first->accelerator_count;
  }
  Precision precision = Precision::kBf16;
  if (const std::string* p = EnvValue(spec, "TRAINYARD_PRECISION")) {
    precision = ParsePrecision(*p).value_or(Precision::kBf16);
  }
  const std::optional<double> peak = GpuPeakFlops(type, precision);
  const std::optional<double> gbps = GpuNetworkGbps(first->machine_type);
  if (!peak || !gbps || gpus_per_node <= 0) return 0;
  const double mfu = std::min(1.0, EnvNumber(spec, "TRAINYARD_MFU").value_or(kGpuMfu));
  const auto batch = EnvNumber(spec, "TRAINYARD_GLOBAL_BATCH_SIZE");
  const auto seq_len = EnvNumber(spec, "TRAINYARD_SEQ_LEN");
  const double tokens = batch && seq_len ? *batch * *seq_len : kDefaultTokensPerStep;
  const double n = static_cast<double>(nodes);
  return (n - 1) * 16 * gpus_per_node * *peak * mfu / (3 * tokens * *gbps * 1e9);
}

Duration WithGangNetwork(Duration run, const CustomJobSpec& spec, int blocks, bool modelled) {
  const double share = GangCommShare(spec);
  const double factor = CrossBlockFactor(blocks) - (modelled ? 0 : 1);
  if (share <= 0 || factor <= 0) return run;
  // In whole microseconds, what a timestamp holds.
  return std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::duration_cast<std::chrono::duration<double, std::micro>>(run) *
      (1 + share * factor));
}

}  // namespace trainyard
