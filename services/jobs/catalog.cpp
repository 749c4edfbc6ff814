#include "services/jobs/catalog.h"

#include <array>
#include <string>

#include "services/cost/capacity_cost.h"

namespace trainyard {
namespace {

using AT = AcceleratorType;

// Grouped by family; FindMachineType scans it linearly. With ~70 entries that is a handful of
// length-mismatch comparisons per lookup, cheaper than any hashing and trivially constexpr.
constexpr MachineType kMachineTypes[] = {
    // A3 / A4 (built-in GPUs). a3-ultragpu-8g and a4-highgpu-8g are here so that FLEX_START's
    // H200 and B200 (docs/wire-format.md, "Limits a create is checked against") name real
    // machine types.
    {"a3-megagpu-8g", 208, 1872, AT::kNvidiaH100Mega80gb, 8, false, 0, "", 1800},
    {"a3-highgpu-1g", 26, 234, AT::kNvidiaH100_80gb, 1, false, 0, "", 25},
    {"a3-highgpu-2g", 52, 468, AT::kNvidiaH100_80gb, 2, false, 0, "", 50},
    {"a3-highgpu-4g", 104, 936, AT::kNvidiaH100_80gb, 4, false, 0, "", 100},
    {"a3-highgpu-8g", 208, 1872, AT::kNvidiaH100_80gb, 8, false, 0, "", 1000},
    {"a3-ultragpu-8g", 224, 2952, AT::kNvidiaH200_141gb, 8, false, 0, "", 3600},
    {"a4-highgpu-8g", 224, 3968, AT::kNvidiaB200, 8, false, 0, "", 3600},
    // A4X: one GB200 NVL72 compute tray (2 Grace CPUs, 4 B200-class GPUs); 140 vCPU, 884 GB,
    // 4 x 400 Gbps RDMA NICs for the GPUs (2,000 Gbps total with the host NICs). Several trays
    // form one NVLink domain (MachineSpec.multihostGpuNodeCount, v1beta1).
    {"a4x-highgpu-4g", 140, 884, AT::kNvidiaGb200, 4, false, 0, "", 2000},
    // G4 (RTX PRO 6000 Blackwell Server Edition, 96 GB GDDR7): 48 vCPU and 180 GB per GPU.
    // Network is the per-VM maximum, 50 Gbps per GPU (approx.).
    {"g4-standard-48", 48, 180, AT::kNvidiaRtxPro6000, 1, false, 0, "", 50},
    {"g4-standard-96", 96, 360, AT::kNvidiaRtxPro6000, 2, false, 0, "", 100},
    {"g4-standard-192", 192, 720, AT::kNvidiaRtxPro6000, 4, false, 0, "", 200},
    {"g4-standard-384", 384, 1440, AT::kNvidiaRtxPro6000, 8, false, 0, "", 400},
    // A2 Ultra (A100 80GB) and A2 Standard (A100 40GB).
    {"a2-ultragpu-1g", 12, 170, AT::kNvidiaA100_80gb, 1, false, 0, "", 24},
    {"a2-ultragpu-2g", 24, 340, AT::kNvidiaA100_80gb, 2, false, 0, "", 32},
    {"a2-ultragpu-4g", 48, 680, AT::kNvidiaA100_80gb, 4, false, 0, "", 50},
    {"a2-ultragpu-8g", 96, 1360, AT::kNvidiaA100_80gb, 8, false, 0, "", 100},
    {"a2-highgpu-1g", 12, 85, AT::kNvidiaTeslaA100, 1, false, 0, "", 24},
    {"a2-highgpu-2g", 24, 170, AT::kNvidiaTeslaA100, 2, false, 0, "", 32},
    {"a2-highgpu-4g", 48, 340, AT::kNvidiaTeslaA100, 4, false, 0, "", 50},
    {"a2-highgpu-8g", 96, 680, AT::kNvidiaTeslaA100, 8, false, 0, "", 100},
    {"a2-megagpu-16g", 96, 1360, AT::kNvidiaTeslaA100, 16, false, 0, "", 100},
    // G2 (L4).
    {"g2-standard-4", 4, 16, AT::kNvidiaL4, 1, false, 0, "", 10},
    {"g2-standard-8", 8, 32, AT::kNvidiaL4, 1, false, 0, "", 16},
    {"g2-standard-12", 12, 48, AT::kNvidiaL4, 1, false, 0, "", 16},
    {"g2-standard-16", 16, 64, AT::kNvidiaL4, 1, false, 0, "", 32},
    {"g2-standard-24", 24, 96, AT::kNvidiaL4, 2, false, 0, "", 32},
    {"g2-standard-32", 32, 128, AT::kNvidiaL4, 1, false, 0, "", 32},
    {"g2-standard-48", 48, 192, AT::kNvidiaL4, 4, false, 0, "", 50},
    {"g2-standard-96", 96, 384, AT::kNvidiaL4, 8, false, 0, "", 100},
    // N1: CPU-only unless GPUs are attached (kN1Attachable below).
    {"n1-standard-4", 4, 15, AT::kUnspecified, 0, false, 0, "", 10},
    {"n1-standard-8", 8, 30, AT::kUnspecified, 0, false, 0, "", 16},
    {"n1-standard-16", 16, 60, AT::kUnspecified, 0, false, 0, "", 32},
    {"n1-standard-32", 32, 120, AT::kUnspecified, 0, false, 0, "", 32},
    {"n1-standard-64", 64, 240, AT::kUnspecified, 0, false, 0, "", 32},
    {"n1-standard-96", 96, 360, AT::kUnspecified, 0, false, 0, "", 32},
    {"n1-highmem-2", 2, 13, AT::kUnspecified, 0, false, 0, "", 10},
    {"n1-highmem-4", 4, 26, AT::kUnspecified, 0, false, 0, "", 10},
    {"n1-highmem-8", 8, 52, AT::kUnspecified, 0, false, 0, "", 16},
    {"n1-highmem-16", 16, 104, AT::kUnspecified, 0, false, 0, "", 32},
    {"n1-highmem-32", 32, 208, AT::kUnspecified, 0, false, 0, "", 32},
    {"n1-highmem-64", 64, 416, AT::kUnspecified, 0, false, 0, "", 32},
    {"n1-highmem-96", 96, 624, AT::kUnspecified, 0, false, 0, "", 32},
    // N2 and E2: CPU only.
    {"n2-standard-4", 4, 16, AT::kUnspecified, 0, false, 0, "", 10},
    {"n2-standard-8", 8, 32, AT::kUnspecified, 0, false, 0, "", 16},
    {"n2-standard-16", 16, 64, AT::kUnspecified, 0, false, 0, "", 32},
    {"n2-standard-32", 32, 128, AT::kUnspecified, 0, false, 0, "", 32},
    {"n2-standard-48", 48, 192, AT::kUnspecified, 0, false, 0, "", 32},
    {"n2-standard-64", 64, 256, AT::kUnspecified, 0, false, 0, "", 32},
    {"n2-standard-80", 80, 320, AT::kUnspecified, 0, false, 0, "", 32},
    {"n2-standard-96", 96, 384, AT::kUnspecified, 0, false, 0, "", 32},
    {"n2-standard-128", 128, 512, AT::kUnspecified, 0, false, 0, "", 32},
    {"e2-standard-4", 4, 16, AT::kUnspecified, 0, false, 0, "", 8},
    {"e2-standard-8", 8, 32, AT::kUnspecified, 0, false, 0, "", 16},
    {"e2-standard-16", 16, 64, AT::kUnspecified, 0, false, 0, "", 16},
    {"e2-standard-32", 32, 128, AT::kUnspecified, 0, false, 0, "", 16},
    // TPU hosts. Network: v5e pod DCN 6.4 Tbps over 64 four-chip hosts = 25 Gbps per chip; v5p
    // 50 Gbps, v6e and 7x 100 Gbps per chip (cloud.google.com/tpu/docs/tpu7x); v4 and the legacy
    // v2/v3 host are planning values.
    {"ct5lp-hightpu-1t", 24, 48, AT::kTpuV5Litepod, 1, true, 1, "v5e", 25},
    {"ct5lp-hightpu-4t", 112, 192, AT::kTpuV5Litepod, 4, true, 4, "v5e", 100},
    {"ct5lp-hightpu-8t", 224, 384, AT::kTpuV5Litepod, 8, true, 8, "v5e", 200},
    {"ct5p-hightpu-4t", 208, 448, AT::kUnspecified, 4, true, 4, "v5p", 200},
    {"ct4p-hightpu-4t", 240, 407, AT::kTpuV4Pod, 4, true, 4, "v4", 100},
    // v6e (Trillium) and 7x (Ironwood) have no AcceleratorType value: machineType + tpuTopology
    // only. 4-chip VMs: v6e 180 vCPU / 720 GB, 7x 224 vCPU / 960 GB (TPU docs). The v6e 8t
    // host has 180 vCPU / 1,440 GB; the 1t host has 44 vCPU, and 176 GB is our value (a VM
    // reports ~172 GB usable).
    {"ct6e-standard-1t", 44, 176, AT::kUnspecified, 1, true, 1, "v6e", 100},
    {"ct6e-standard-4t", 180, 720, AT::kUnspecified, 4, true, 4, "v6e", 400},
    {"ct6e-standard-8t", 180, 1440, AT::kUnspecified, 8, true, 8, "v6e", 800},
    // Family "7x": Google spells the chip TPU7x, so its quota metric is TPU_7X.
    {"tpu7x-standard-4t", 224, 960, AT::kUnspecified, 4, true, 4, "7x", 400},
    // Legacy TPU v2/v3 (a v2-8/v3-8 host: 4 chips, 8 TensorCores); sized by acceleratorCount.
    {"cloud-tpu", 96, 335, AT::kUnspecified, 0, true, 4, "", 100},
};

constexpr std::string_view kCloudTpu = "cloud-tpu";

struct TopologyEntry {
  std::string_view machine_type;
  std::string_view topology;
  int chips;
};

// Slice shapes per TPU machine type, smallest first. v5e follows the 2D shape table in
// docs/capacity-model.md ("TPU slices"): a 1t host only forms 1x1, an 8t host only the single-host
// 2x4, and every multi-host v5e slice is built from 4t hosts (plus the single-host 2x2). v5p is the
// documented list up to 16x16x24 (6,144 chips); v4 the common power-of-two shapes up to a full pod.
// v6e has v5e's 2D shapes (pods of 256 chips), except that GKE also forms 2x4 from two 4t hosts. 7x
// is a 3D torus of 4-chip hosts like v5p: the power-of-two ladder from 2x2x1 plus 16x16x24 and the
// full 9,216-chip pod 16x24x24. GKE accepts ~90 further non-cubic shapes (4x4x12, 4x8x20, ...);
// they are left out until someone needs one.
constexpr TopologyEntry kTopologies[] = {
    {"ct5lp-hightpu-1t", "1x1", 1},          {"ct5lp-hightpu-4t", "2x2", 4},
    {"ct5lp-hightpu-4t", "4x4", 16},         {"ct5lp-hightpu-4t", "4x8", 32},
    {"ct5lp-hightpu-4t", "8x8", 64},         {"ct5lp-hightpu-4t", "8x16", 128},
    {"ct5lp-hightpu-4t", "16x16", 256},      {"ct5lp-hightpu-8t", "2x4", 8},
    {"ct5p-hightpu-4t", "2x2x1", 4},         {"ct5p-hightpu-4t", "2x2x2", 8},
    {"ct5p-hightpu-4t", "2x4x4", 32},        {"ct5p-hightpu-4t", "4x4x4", 64},
    {"ct5p-hightpu-4t", "4x4x8", 128},       {"ct5p-hightpu-4t", "4x8x8", 256},
    {"ct5p-hightpu-4t", "8x8x8", 512},       {"ct5p-hightpu-4t", "8x8x16", 1024},
    {"ct5p-hightpu-4t", "8x16x16", 2048},    {"ct5p-hightpu-4t", "16x16x16", 4096},
    {"ct5p-hightpu-4t", "16x16x24", 6144},   {"ct4p-hightpu-4t", "2x2x1", 4},
    {"ct4p-hightpu-4t", "2x2x2", 8},         {"ct4p-hightpu-4t", "2x2x4", 16},
    {"ct4p-hightpu-4t", "2x4x4", 32},        {"ct4p-hightpu-4t", "4x4x4", 64},
    {"ct4p-hightpu-4t", "4x4x8", 128},       {"ct4p-hightpu-4t", "4x8x8", 256},
    {"ct4p-hightpu-4t", "8x8x8", 512},       {"ct4p-hightpu-4t", "8x8x16", 1024},
    {"ct4p-hightpu-4t", "8x16x16", 2048},    {"ct4p-hightpu-4t", "16x16x16", 4096},
    {"ct6e-standard-1t", "1x1", 1},          {"ct6e-standard-4t", "2x2", 4},
    {"ct6e-standard-4t", "2x4", 8},          {"ct6e-standard-4t", "4x4", 16},
    {"ct6e-standard-4t", "4x8", 32},         {"ct6e-standard-4t", "8x8", 64},
    {"ct6e-standard-4t", "8x16", 128},       {"ct6e-standard-4t", "16x16", 256},
    {"ct6e-standard-8t", "2x4", 8},          {"tpu7x-standard-4t", "2x2x1", 4},
    {"tpu7x-standard-4t", "2x2x2", 8},       {"tpu7x-standard-4t", "2x2x4", 16},
    {"tpu7x-standard-4t", "2x4x4", 32},      {"tpu7x-standard-4t", "4x4x4", 64},
    {"tpu7x-standard-4t", "4x4x8", 128},     {"tpu7x-standard-4t", "4x8x8", 256},
    {"tpu7x-standard-4t", "8x8x8", 512},     {"tpu7x-standard-4t", "8x8x16", 1024},
    {"tpu7x-standard-4t", "8x16x16", 2048},  {"tpu7x-standard-4t", "16x16x16", 4096},
    {"tpu7x-standard-4t", "16x16x24", 6144}, {"tpu7x-standard-4t", "16x24x24", 9216},
};

// GPUs Compute Engine attaches to N1 VMs, with the largest vCPU count each GPU count supports
// (cloud.google.com/compute/docs/gpus). The memory limits that go with them never bind for the
// n1-standard/n1-highmem sizes in the catalog, so they are not modelled. P100 x4 allows 96 vCPUs
// only in some zones (64 elsewhere); we accept 96 rather than reject jobs valid somewhere.
struct AttachOption {
  int count;
  int max_vcpus;
};
struct Attachable {
  AcceleratorType type;
  std::array<AttachOption, 4> options;  // count 0 ends the list
};
constexpr Attachable kN1Attachable[] = {
    {AT::kNvidiaTeslaT4, {{{1, 48}, {2, 48}, {4, 96}, {0, 0}}}},
    {AT::kNvidiaTeslaV100, {{{1, 12}, {2, 24}, {4, 48}, {8, 96}}}},
    {AT::kNvidiaTeslaP100, {{{1, 16}, {2, 32}, {4, 96}, {0, 0}}}},
    {AT::kNvidiaTeslaP4, {{{1, 24}, {2, 48}, {4, 96}, {0, 0}}}},
};

// Legacy TPU pods: v2 pods have 512 TensorCores, v3 pods 2,048.
constexpr int kTpuV2MaxCores = 512;
constexpr int kTpuV3MaxCores = 2048;

}  // namespace

bool IsCloudTpu(const MachineType& m) { return m.name == kCloudTpu; }

std::vector<AcceleratorType> N1AttachableAccelerators() {
  std::vector<AcceleratorType> out;
  for (const Attachable& a : kN1Attachable) out.push_back(a.type);
  return out;
}

// Enum names as the wire spells them, for error text and quota metric names.
int64_t AcceleratorsHeld(const std::vector<PlacedPoolStatus>& pools) {
  int64_t out = 0;
  for (const PlacedPoolStatus& pool : pools) {
    const MachineType* machine = FindMachineType(pool.machine_type);
    if (machine == nullptr) continue;
    const int per_node = machine->is_tpu
                             ? (machine->tpu_family.empty() ? 0 : machine->tpu_chips_per_host)
                             : machine->accelerator_count;
    out += static_cast<int64_t>(pool.nodes.size()) * per_node;
  }
  return out;
}

std::optional<double> CostPerProductiveAcceleratorHour(const SchedulingStatus& status) {
  return cost::PerProductiveAcceleratorHour(status.cost_usd, status.goodput.Productive(),
                                            AcceleratorsHeld(status.pools));
}

std::string AcceleratorName(AcceleratorType type) {
  switch (type) {
    case AT::kUnspecified:
      return "ACCELERATOR_TYPE_UNSPECIFIED";
    case AT::kNvidiaTeslaK80:
      return "NVIDIA_TESLA_K80";
    case AT::kNvidiaTeslaP100:
      return "NVIDIA_TESLA_P100";
    case AT::kNvidiaTeslaV100:
      return "NVIDIA_TESLA_V100";
    case AT::kNvidiaTeslaP4:
      return "NVIDIA_TESLA_P4";
    case AT::kNvidiaTeslaT4:
      return "NVIDIA_TESLA_T4";
    case AT::kTpuV2:
      return "TPU_V2";
    case AT::kTpuV3:
      return "TPU_V3";
    case AT::kNvidiaTeslaA100:
      return "NVIDIA_TESLA_A100";
    case AT::kNvidiaA100_80gb:
      return "NVIDIA_A100_80GB";
    case AT::kTpuV4Pod:
      return "TPU_V4_POD";
    case AT::kNvidiaL4:
      return "NVIDIA_L4";
    case AT::kTpuV5Litepod:
      return "TPU_V5_LITEPOD";
    case AT::kNvidiaH100_80gb:
      return "NVIDIA_H100_80GB";
    case AT::kNvidiaH100Mega80gb:
      return "NVIDIA_H100_MEGA_80GB";
    case AT::kNvidiaH200_141gb:
      return "NVIDIA_H200_141GB";
    case AT::kNvidiaB200:
      return "NVIDIA_B200";
    case AT::kNvidiaGb200:
      return "NVIDIA_GB200";
    case AT::kNvidiaRtxPro6000:
      return "NVIDIA_RTX_PRO_6000";
  }
  return "AcceleratorType(" + std::to_string(static_cast<int>(type)) + ")";
}

namespace {

// "a", "a or b", "a, b or c".
std::string JoinOr(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += (i + 1 == items.size()) ? " or " : ", ";
    out += items[i];
  }
  return out;
}

std::string Got(AcceleratorType type, int32_t count) {
  return " (got acceleratorType " + AcceleratorName(type) + ", acceleratorCount " +
         std::to_string(count) + ")";
}

std::string N(std::string_view s) { return std::string(s); }

bool IsBuiltInGpu(const MachineType& m) { return !m.is_tpu && m.accelerator_count > 0; }
bool IsN1(const MachineType& m) { return m.name.starts_with("n1-"); }

Status CheckBuiltInGpu(const MachineType& m, AcceleratorType type, int32_t count) {
  // Vertex wants both fields spelled out for A2/A3/G2 even though the machine type implies them.
  const std::string rule = N(m.name) + " takes acceleratorType " + AcceleratorName(m.accelerator) +
                           " with acceleratorCount " + std::to_string(m.accelerator_count);
  if (type != m.accelerator) return InvalidField("acceleratorType", rule + Got(type, count));
  if (count != m.accelerator_count) {
    return InvalidField("acceleratorCount", rule + Got(type, count));
  }
  return Status::Ok();
}

// The counts of `a` that fit on `m`, e.g. {"1", "2", "4"}.
std::vector<std::string> N1Counts(const MachineType& m, const Attachable& a) {
  std::vector<std::string> counts;
  for (const AttachOption& o : a.options) {
    if (o.count > 0 && m.vcpus <= o.max_vcpus) counts.push_back(std::to_string(o.count));
  }
  return counts;
}

Status CheckN1(const MachineType& m, AcceleratorType type, int32_t count) {
  std::vector<std::string> offers;
  const Attachable* match = nullptr;
  for (const Attachable& a : kN1Attachable) {
    std::vector<std::string> counts = N1Counts(m, a);
    if (counts.empty()) continue;
    offers.push_back(AcceleratorName(a.type) + " with " + JoinOr(counts));
    if (a.type == type) match = &a;
  }
  // Commas only between offers: each offer already has its own "or".
  std::string rule = N(m.name) + " takes ";
  for (const std::string& offer : offers) rule += offer + ", ";
  rule += "or no accelerator (acceleratorCount 0)";
  // The enum still has K80, but Compute Engine retired K80 GPUs in 2024; say so, not just "no".
  if (type == AT::kNvidiaTeslaK80) rule += "; NVIDIA_TESLA_K80 is retired";
  if (type == AT::kUnspecified) {
    if (count == 0) return Status::Ok();
    return InvalidField("acceleratorCount", rule + Got(type, count));
  }
  if (match == nullptr) return InvalidField("acceleratorType", rule + Got(type, count));
  for (const AttachOption& o : match->options) {
    if (o.count > 0 && o.count == count && m.vcpus <= o.max_vcpus) return Status::Ok();
  }
  return InvalidField("acceleratorCount", rule + Got(type, count));
}

Status CheckCpuOnly(const MachineType& m, AcceleratorType type, int32_t count) {
  const std::string rule = N(m.name) +
                           " takes no accelerators (acceleratorType unset, acceleratorCount 0); "
                           "attach GPUs to an n1 type or choose an a2, a3, a4, a4x, g2 or g4 "
                           "type";
  if (type != AT::kUnspecified) return InvalidField("acceleratorType", rule + Got(type, count));
  if (count != 0) return InvalidField("acceleratorCount", rule + Got(type, count));
  return Status::Ok();
}

Status CheckTpuHost(const MachineType& m, AcceleratorType type, int32_t count) {
  std::string rule = N(m.name) + " takes no acceleratorType";
  if (m.accelerator != AT::kUnspecified) rule += " (or " + AcceleratorName(m.accelerator) + ")";
  rule += " and acceleratorCount 0 or " + std::to_string(m.tpu_chips_per_host) +
          " (chips per host); the slice size comes from tpuTopology";
  if (type != AT::kUnspecified && type != m.accelerator) {
    return InvalidField("acceleratorType", rule + Got(type, count));
  }
  if (count != 0 && count != m.tpu_chips_per_host) {
    return InvalidField("acceleratorCount", rule + Got(type, count));
  }
  return Status::Ok();
}

Status CheckCloudTpu(const MachineType& m, AcceleratorType type, int32_t count) {
  const std::string rule = N(m.name) +
                           " takes acceleratorType TPU_V2 or TPU_V3 with acceleratorCount 8 (one "
                           "host) or a multiple of 32 up to " +
                           std::to_string(kTpuV2MaxCores) + " (TPU_V2) or " +
                           std::to_string(kTpuV3MaxCores) + " (TPU_V3)";
  if (type != AT::kTpuV2 && type != AT::kTpuV3) {
    return InvalidField("acceleratorType", rule + Got(type, count));
  }
  const int max_cores = type == AT::kTpuV2 ? kTpuV2MaxCores : kTpuV3MaxCores;
  const bool pod = count >= 32 && count % 32 == 0 && count <= max_cores;
  if (count != kCloudTpuHostCores && !pod)
    return InvalidField("acceleratorCount", rule + Got(type, count));
  return Status::Ok();
}

}  // namespace

const MachineType* FindMachineType(std::string_view name) {
  for (const MachineType& m : kMachineTypes) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

std::vector<std::string_view> MachineTypeNames() {
  std::vector<std::string_view> names;
  names.reserve(std::size(kMachineTypes));
  for (const MachineType& m : kMachineTypes) names.push_back(m.name);
  return names;
}

Status CheckAccelerator(const MachineType& machine, AcceleratorType type, int32_t count) {
  if (IsCloudTpu(machine)) return CheckCloudTpu(machine, type, count);
  if (machine.is_tpu) return CheckTpuHost(machine, type, count);
  if (IsBuiltInGpu(machine)) return CheckBuiltInGpu(machine, type, count);
  if (IsN1(machine)) return CheckN1(machine, type, count);
  return CheckCpuOnly(machine, type, count);
}

std::vector<std::string_view> TpuTopologies(const MachineType& machine) {
  std::vector<std::string_view> out;
  for (const TopologyEntry& t : kTopologies) {
    if (t.machine_type == machine.name) out.push_back(t.topology);
  }
  return out;
}

StatusOr<TpuSlice> ResolveTpuTopology(const MachineType& machine, std::string_view topology) {
  if (!machine.is_tpu) {
    return InvalidField("tpuTopology",
                        "tpuTopology applies only to TPU machine types (ct5lp-hightpu-1t/4t/8t, "
                        "ct5p-hightpu-4t, ct4p-hightpu-4t, ct6e-standard-1t/4t/8t, "
                        "tpu7x-standard-4t); " +
                            N(machine.name) + " is not one");
  }
  if (IsCloudTpu(machine)) {
    return InvalidField("tpuTopology",
                        "cloud-tpu takes no tpuTopology: its size is acceleratorCount (8 for one "
                        "host, a multiple of 32 for a pod)");
  }
  const int per_host = machine.tpu_chips_per_host;
  for (const TopologyEntry& t : kTopologies) {
    if (t.machine_type != machine.name) continue;
    // Vertex requires tpuTopology only for multi-host slices. Unset, the one slice a
    // replicaCount-1 pool can mean is a single full host (1x1, 2x2, 2x4, 2x2x1), so we resolve to
    // it instead of rejecting: that is also what acceleratorCount = chips per host describes.
    const bool match = topology.empty() ? t.chips == per_host : t.topology == topology;
    if (match) return TpuSlice{t.chips, (t.chips + per_host - 1) / per_host};
  }
  std::vector<std::string> valid;
  for (std::string_view t : TpuTopologies(machine)) valid.push_back(N(t));
  return InvalidField("tpuTopology", N(machine.name) + " takes tpuTopology " + JoinOr(valid) +
                                         " (got \"" + N(topology) + "\")");
}

std::optional<Precision> ParsePrecision(std::string_view name) {
  if (name == "bf16") return Precision::kBf16;
  if (name == "fp8") return Precision::kFp8;
  return std::nullopt;
}

std::optional<double> GpuPeakFlops(AcceleratorType type, Precision precision) {
  struct Peak {
    double bf16;
    double fp8;  // 0: no fp8 tensor cores
  };
  auto peak = [&]() -> std::optional<Peak> {
    switch (type) {
      case AT::kNvidiaH100_80gb:
      case AT::kNvidiaH100Mega80gb:
      case AT::kNvidiaH200_141gb:  // same SXM5 compute as H100, more memory
        return Peak{989e12, 1979e12};
      case AT::kNvidiaB200:
        return Peak{2250e12, 4500e12};
      case AT::kNvidiaGb200:  // GB200 NVL72: 180 PF bf16, 360 PF fp8 dense over 72 GPUs
        return Peak{2500e12, 5000e12};
      case AT::kNvidiaRtxPro6000:
        // NVIDIA quotes 4,000 AI TOPS (fp4, sparse): halved for dense, halved again per step up
        // in precision. Our derivation, not a published dense figure.
        return Peak{500e12, 1000e12};
      case AT::kNvidiaTeslaA100:
      case AT::kNvidiaA100_80gb:
        return Peak{312e12, 0};
      case AT::kNvidiaL4:
        return Peak{121e12, 242e12};
      case AT::kNvidiaTeslaV100:
        return Peak{125e12, 0};  // fp16 tensor cores: V100 has no bf16
      case AT::kNvidiaTeslaT4:
        return Peak{65e12, 0};  // fp16
      default:
        return std::nullopt;
    }
  }();
  if (!peak) return std::nullopt;
  double value = precision == Precision::kBf16 ? peak->bf16 : peak->fp8;
  if (value <= 0) return std::nullopt;
  return value;
}

std::optional<double> TpuPeakFlops(std::string_view family, Precision precision) {
  // 7x (cloud.google.com/tpu/docs/tpu7x) is the first TPU with native fp8: 2,307 TFLOP/s bf16,
  // 4,614 fp8 per chip. The table there lists fp8 for v6e and v5p at their bf16 rate (no fp8
  // units), so like the older chips' integer 8-bit modes they have no fp8 figure here.
  if (family == "7x") return precision == Precision::kBf16 ? 2307e12 : 4614e12;
  // docs/capacity-model.md ("Compute"): v5e 197, v5p 459, v4 275 TFLOP/s bf16 per chip; v3 123
  // and v2 45 (per chip of two TensorCores); v6e 918 (cloud.google.com/tpu/docs/v6e).
  if (precision != Precision::kBf16) return std::nullopt;
  if (family == "v6e") return 918e12;
  if (family == "v5e") return 197e12;
  if (family == "v5p") return 459e12;
  if (family == "v4") return 275e12;
  if (family == "v3") return 123e12;
  if (family == "v2") return 45e12;
  return std::nullopt;
}

std::optional<double> GpuMemoryGib(AcceleratorType type) {
  switch (type) {
    case AT::kNvidiaH100_80gb:
    case AT::kNvidiaH100Mega80gb:
    case AT::kNvidiaA100_80gb:
      return 80;
    case AT::kNvidiaH200_141gb:
      return 141;
    case AT::kNvidiaB200:
      return 180;
    case AT::kNvidiaGb200:
      return 186;
    case AT::kNvidiaRtxPro6000:
      return 96;
    case AT::kNvidiaTeslaA100:
      return 40;
    case AT::kNvidiaL4:
      return 24;
    case AT::kNvidiaTeslaV100:
    case AT::kNvidiaTeslaT4:
    case AT::kNvidiaTeslaP100:
      return 16;
    case AT::kNvidiaTeslaP4:
      return 8;
    default:
      return std::nullopt;
  }
}

std::optional<double> TpuChipMemoryGib(std::string_view family) {
  // HBM per chip (cloud.google.com/tpu/docs/system-architecture-tpu-vm and the per-version
  // pages); v2 and v3 chips carry two TensorCores of 8 and 16 GiB.
  if (family == "7x") return 192;
  if (family == "v6e") return 32;
  if (family == "v5e") return 16;
  if (family == "v5p") return 95;
  if (family == "v4") return 32;
  if (family == "v3") return 32;
  if (family == "v2") return 16;
  return std::nullopt;
}

int MaxMultihostGpuNodes(const MachineType& machine) {
  // A GB200 NVL72 rack is 18 A4X trays in one NVLink domain; no other catalog type spans hosts.
  return machine.accelerator == AT::kNvidiaGb200 ? 18 : 0;
}

}  // namespace trainyard
