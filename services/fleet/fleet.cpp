#include "services/fleet/fleet.h"

#include <algorithm>
#include <charconv>

#include "services/fleet/node_state.h"
#include "services/jobs/catalog.h"

namespace trainyard {
namespace {

using AT = AcceleratorType;

// On-demand list price of one accelerator-hour (docs/capacity-model.md, "Prices"; us-central1,
// approx.).
double GpuHourPrice(AcceleratorType type) {
  switch (type) {
    case AT::kNvidiaH100Mega80gb:
      return 11.5;
    case AT::kNvidiaH100_80gb:
      return 11.06;
    case AT::kNvidiaH200_141gb:
      return 13.0;
    case AT::kNvidiaB200:
      return 15.0;
    case AT::kNvidiaGb200:
      // No public list price for a4x-highgpu-4g (sold through reservations); our planning value
      // sits just above B200 for the larger NVLink domain and the Grace host.
      return 16.0;
    case AT::kNvidiaRtxPro6000:
      return 4.50;  // g4-standard-48, whole VM, us-central1 on-demand (Oct 2025)
    case AT::kNvidiaA100_80gb:
      return 5.07;
    case AT::kNvidiaTeslaA100:
      return 3.67;
    case AT::kNvidiaL4:
      return 0.71;
    case AT::kNvidiaTeslaT4:
      return 0.35;
    case AT::kNvidiaTeslaV100:
      return 2.48;
    case AT::kNvidiaTeslaP100:
      return 1.46;
    case AT::kNvidiaTeslaP4:
      return 0.60;
    default:
      return 2.0;
  }
}

double TpuChipHourPrice(std::string_view family) {
  if (family == "v5e") return 1.20;
  if (family == "v5p") return 4.20;
  if (family == "v4") return 3.22;
  if (family == "v6e") return 2.70;  // us-central1 on-demand
  // TPU7x has no public list price (access through the account team). Planning value: v5p's
  // price per bf16 FLOP relative to H100 (~0.8x) applied to B200's $15 at 7x's 2,307 TFLOP/s.
  if (family == "7x") return 12.0;
  // cloud-tpu: a v2-8 host lists at $4.50/h, a v3-8 at $8.00/h, 4 chips each.
  if (family == "v2") return 1.125;
  return 2.0;  // v3
}

constexpr double kVcpuHourPrice = 0.0475;

}  // namespace

int CapacityPool::UnitsAvailableAt(Timestamp now, Timestamp epoch) const {
  if (window_start && now < *window_start) return 0;
  if (window_end && now >= *window_end) return 0;
  int available = units;
  if (model == ConsumptionModel::kFlexStart) {
    available = 0;
    for (const FlexStartStep& step : flex_start) {
      if (epoch + std::chrono::duration_cast<std::chrono::microseconds>(step.after) <= now) {
        available = step.units;
      }
    }
    available = std::min(available, units);
  }
  if (!capacity_steps.empty()) {
    available = std::min(available, UnitsAt(capacity_steps, now - epoch, units));
  }
  return available;
}

bool CapacityPool::UsableBy(std::string_view project_id) const {
  if (projects.empty()) return true;
  return std::find(projects.begin(), projects.end(), project_id) != projects.end();
}

std::optional<int64_t> QuotaConfig::Limit(const std::string& project_id,
                                          const std::string& metric) const {
  if (auto p = per_project.find(project_id); p != per_project.end()) {
    if (auto m = p->second.find(metric); m != p->second.end()) return m->second;
  }
  if (auto m = defaults.find(metric); m != defaults.end()) return m->second;
  return std::nullopt;
}

const CohortMember* Cohort::Member(std::string_view project) const {
  for (const CohortMember& m : members) {
    if (m.project == project) return &m;
  }
  return nullptr;
}

Cohort::Now Cohort::At(const std::vector<CapacityPool>& fleet_pools, Timestamp now,
                       Timestamp epoch) const {
  Now out;
  out.cohort = this;
  for (const auto& [resource, units] : capacity) out.capacity[resource] = 0;
  for (const CapacityPool& pool : fleet_pools) {
    if (std::find(pools.begin(), pools.end(), pool.id) == pools.end()) continue;
    out.capacity[CohortResource(pool)] += pool.UnitsAvailableAt(now, epoch);
  }
  return out;
}

int64_t Cohort::Now::Capacity(const std::string& resource) const {
  auto it = capacity.find(resource);
  return it == capacity.end() ? 0 : it->second;
}

int64_t Cohort::Now::Nominal(const CohortMember& member, const std::string& resource) const {
  const int64_t nominal = member.Nominal(resource);
  auto most = cohort->capacity.find(resource);
  if (nominal == 0 || most == cohort->capacity.end() || most->second <= 0) return nominal;
  const int64_t now = Capacity(resource);
  return now >= most->second ? nominal : nominal * now / most->second;
}

int64_t CohortMember::Nominal(const std::string& resource) const {
  auto it = nominal.find(resource);
  return it == nominal.end() ? 0 : it->second;
}

std::string CohortResource(const std::string& machine_type, ConsumptionModel model) {
  return machine_type + "/" + std::string(ConsumptionModelName(model));
}

std::string CohortResource(const CapacityPool& pool) {
  return CohortResource(pool.machine_type, pool.model);
}

void Fleet::SetEpoch(Timestamp value) {
  epoch = value;
  for (CapacityPool& pool : pools) {
    if (pool.availability) {
      pool.capacity_steps = DrawSpotCapacity(seed, pool.id, pool.units, *pool.availability);
    }
    if (!pool.window_after || !pool.window_length) continue;
    pool.window_start =
        epoch + std::chrono::duration_cast<std::chrono::microseconds>(*pool.window_after);
    pool.window_end = *pool.window_start +
                      std::chrono::duration_cast<std::chrono::microseconds>(*pool.window_length);
  }
}

const CapacityPool* Fleet::FindPool(std::string_view id) const {
  int index = PoolIndex(id);
  return index < 0 ? nullptr : &pools[index];
}

int Fleet::PoolIndex(std::string_view id) const {
  for (size_t i = 0; i < pools.size(); ++i) {
    if (pools[i].id == id) return static_cast<int>(i);
  }
  return -1;
}

Duration Fleet::BootTime(std::string_view machine_type) const {
  if (auto it = boot_time.find(std::string(machine_type)); it != boot_time.end()) return it->second;
  if (auto it = boot_time.find("default"); it != boot_time.end()) return it->second;
  return std::chrono::minutes(5);
}

double Fleet::ImageSizeGb(std::string_view image_uri) const {
  if (auto it = image_size_gb.find(std::string(image_uri)); it != image_size_gb.end()) {
    return it->second;
  }
  if (auto d = image_size_gb.find("default"); d != image_size_gb.end()) return d->second;
  return 8;
}

Duration Fleet::ImagePullTime(std::string_view image_uri) const {
  const double gb = ImageSizeGb(image_uri);
  double seconds = image_pull_gbps > 0 ? gb * 8 / image_pull_gbps : 0;
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
}

namespace {

// Discounts (docs/capacity-model.md, "Prices"): CUD 37% (1y) / 55% (3y); DWS flex-start and
// calendar mode about half; spot 60% off GPUs and 65% off TPUs.
double Discounted(double on_demand, ConsumptionModel model, std::string_view term, bool tpu) {
  switch (model) {
    case ConsumptionModel::kOnDemand:
      return on_demand;
    case ConsumptionModel::kReservation:
      if (term == "3y") return on_demand * 0.45;
      if (term == "1y") return on_demand * 0.63;
      return on_demand * 0.5;  // calendar mode
    case ConsumptionModel::kFlexStart:
      return on_demand * 0.5;
    case ConsumptionModel::kSpot:
      return on_demand * (tpu ? 0.35 : 0.4);
  }
  return on_demand;
}

}  // namespace

double ListPricePerNodeHour(std::string_view machine_type, ConsumptionModel model,
                            std::string_view term, int chips_per_host) {
  const MachineType* machine = FindMachineType(machine_type);
  if (machine == nullptr) return 0;
  double on_demand = 0;
  if (machine->is_tpu) {
    int chips = chips_per_host > 0 ? chips_per_host : machine->tpu_chips_per_host;
    on_demand = TpuChipHourPrice(machine->tpu_family) * chips;
  } else if (machine->accelerator != AT::kUnspecified) {
    on_demand = GpuHourPrice(machine->accelerator) * machine->accelerator_count;
  } else {
    on_demand = kVcpuHourPrice * machine->vcpus;
  }
  return Discounted(on_demand, model, term, machine->is_tpu);
}

double ListPricePerNodeHour(std::string_view machine_type, AcceleratorType attached, int count,
                            ConsumptionModel model) {
  if (attached == AT::kTpuV2 || attached == AT::kTpuV3) {
    const double chips = count / 2.0;  // two TensorCores a chip
    return Discounted(TpuChipHourPrice(attached == AT::kTpuV2 ? "v2" : "v3") * chips, model, "",
                      true);
  }
  const double vm = ListPricePerNodeHour(machine_type, model, "", 0);
  const double gpus = GpuHourPrice(attached) * count;
  return vm + (model == ConsumptionModel::kSpot ? gpus * 0.4 : gpus);
}

std::string AttachedPoolType(std::string_view machine_type, AcceleratorType attached) {
  const std::string_view base = machine_type.starts_with("n1-") ? "n1" : machine_type;
  return std::string(base) + "+" + AcceleratorName(attached);
}

std::optional<NodeRef> FindNode(const Fleet& fleet, std::string_view name) {
  size_t dash = name.rfind('-');
  if (dash == std::string_view::npos || dash + 1 >= name.size()) return std::nullopt;
  int64_t ordinal = -1;
  std::string_view digits = name.substr(dash + 1);
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), ordinal);
  if (ec != std::errc{} || end != digits.data() + digits.size() || ordinal < 0) return std::nullopt;
  for (const CapacityPool& pool : fleet.pools) {
    if (ordinal < pool.nodes() && NodeName(pool.id, ordinal) == name) {
      return NodeRef{pool.id, ordinal};
    }
  }
  return std::nullopt;
}

}  // namespace trainyard
