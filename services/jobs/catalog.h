#pragma once
// The machine catalog: every machine type a worker pool may name, with the accelerators it carries
// or accepts and, for TPUs, the slice shapes it can form. Pure data plus lookups, shared by
// validation (what may be asked for) and the scheduler (how many chips and hosts a request really
// takes).
//
// Figures are Compute Engine's published shapes (vCPU, memory, GPUs). Network bandwidth is the
// per-VM maximum egress and is approximate for TPU hosts (derived from per-chip DCN figures).
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "services/model/custom_job.h"
#include "services/status.h"

namespace trainyard {

struct MachineType {
  std::string_view name;
  int vcpus;
  int memory_gb;
  // Built-in GPUs (a2/a3/a4/g2): their type and count, both fixed by the machine type. TPU
  // types: the optional TPU enum value Vertex also accepts (kUnspecified for v5p, which has
  // none) and the chips per host. N1 (attachable GPUs), other CPU types and cloud-tpu (sized
  // by the request): kUnspecified and 0.
  AcceleratorType accelerator;
  int accelerator_count;
  bool is_tpu;
  int tpu_chips_per_host;       // 0 for non-TPU types; 4 (chips per v2/v3 host) for cloud-tpu
  std::string_view tpu_family;  // "v5e", "v5p", "v4", "v6e", "7x"; "" for non-TPU and cloud-tpu,
                                // whose family (v2 or v3) comes from the request's acceleratorType
  int network_gbps;
};

// nullptr when the name is not in the catalog. Names are exact (case-sensitive), as in Vertex.
const MachineType* FindMachineType(std::string_view name);

// The accelerators (built-in GPUs, TPU chips) on the nodes of a placement: a node's count from its
// machine type. N1 VMs with attached GPUs and cloud-tpu count none (their size is the request's).
int64_t AcceleratorsHeld(const std::vector<PlacedPoolStatus>& pools);

// What a job's capacity cost for each accelerator-hour that trained and kept its result: its cost
// over its productive time × the accelerators it holds (services/cost/capacity_cost.h). nullopt
// before any productive time, or when the placement has no countable accelerators.
std::optional<double> CostPerProductiveAcceleratorHour(const SchedulingStatus& status);

// The proto enum name ("NVIDIA_H100_MEGA_80GB"), for error text and quota metric names.
std::string AcceleratorName(AcceleratorType type);

// Every catalog name, in catalog order (grouped by family).
std::vector<std::string_view> MachineTypeNames();

// Whether `type` with `count` may run on `machine`. On failure the INVALID_ARGUMENT carries one
// violation whose field is relative to the MachineSpec ("acceleratorType" or "acceleratorCount"),
// so callers prefix their own path; the description lists the combinations that do exist.
Status CheckAccelerator(const MachineType& machine, AcceleratorType type, int32_t count);

struct TpuSlice {
  int chips;
  int hosts;
};

// The slice a TPU machine type forms with `topology` ("2x2", "4x4x8", …). An empty topology means
// the single-host slice of that machine type (see catalog.cpp for why). On failure the violation's
// field is "tpuTopology" and the description lists the valid topologies for the machine type.
// cloud-tpu (v2/v3) is sized by acceleratorCount, not by a topology, and always fails here.
StatusOr<TpuSlice> ResolveTpuTopology(const MachineType& machine, std::string_view topology);

// cloud-tpu: one host (a v2-8 or v3-8) has 8 TensorCores on 4 chips; larger sizes are pods of
// such hosts.
inline constexpr int kCloudTpuHostCores = 8;
bool IsCloudTpu(const MachineType& machine);

// The GPU types an N1 machine can have attached (T4, V100, P100, P4).
std::vector<AcceleratorType> N1AttachableAccelerators();

// The topologies ResolveTpuTopology accepts for `machine`, smallest first; empty for non-TPU
// types and for cloud-tpu.
std::vector<std::string_view> TpuTopologies(const MachineType& machine);

// Number format a training step runs in, for the peak rates below.
enum class Precision { kBf16, kFp8 };
// "bf16" or "fp8"; nullopt otherwise.
std::optional<Precision> ParsePrecision(std::string_view name);

// Dense peak FLOP/s of one chip (vendor data sheets, no sparsity): a GPU by its accelerator type,
// a TPU by its family ("7x", "v6e", "v5e", "v5p", "v4", "v3", "v2"). nullopt when the chip has no
// such mode (fp8 on A100, V100, T4 or any TPU before 7x) or its figure is not in the catalog.
std::optional<double> GpuPeakFlops(AcceleratorType type, Precision precision);
std::optional<double> TpuPeakFlops(std::string_view family, Precision precision);

// Memory of one chip in GiB (HBM, or GDDR for L4/T4/P4): a GPU by its accelerator type, a TPU by
// its family. nullopt when the catalog has no figure.
std::optional<double> GpuMemoryGib(AcceleratorType type);
std::optional<double> TpuChipMemoryGib(std::string_view family);

// The largest MachineSpec.multihostGpuNodeCount (v1beta1) `machine` takes: how many hosts one
// replica may span in a multi-node NVLink domain. 0 when the machine type cannot span hosts.
int MaxMultihostGpuNodes(const MachineType& machine);

}  // namespace trainyard
