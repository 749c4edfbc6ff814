#include "services/fleet/fleet.h"

#include <algorithm>
#include <charconv>

#include "services/cost/price.h"
#include "services/fleet/node_state.h"
#include "services/jobs/catalog.h"

namespace trainyard {
int CapacityPool::UnitsAvailableAt(Timestamp now, Timestamp epoch) const {
  if (window_start && now < *window_start) return 0;
  if (window_end && now >= *window_end) return 0;
  int available = units;
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

namespace {

std::vector<CapacityStep> AtMost(std::vector<CapacityStep> steps, int units) {
  for (CapacityStep& step : steps) step.units = std::min(step.units, units);
  return steps;
}

}  // namespace

void Fleet::SetEpoch(Timestamp value) {
  epoch = value;
  for (size_t z = 0; z < zone_capacity.size(); ++z) {
    ZoneCapacity& zone = zone_capacity[z];
    zone.steps = DrawZoneCapacity(seed, zone.region, zone.zone, zone.machine_type, zone.units,
                                  zone.outside_on_demand, zone_correlation);
    zone.on_demand_pool = zone.spot_pool = -1;
    for (size_t p = 0; p < pools.size(); ++p) {
      CapacityPool& pool = pools[p];
      if (pool.zone != zone.zone || pool.machine_type != zone.machine_type || pool.elastic ||
          (pool.model != ConsumptionModel::kOnDemand && pool.model != ConsumptionModel::kSpot)) {
        continue;
      }
      pool.zone_capacity = static_cast<int>(z);
      pool.capacity_steps = AtMost(zone.steps, pool.units);
      (pool.model == ConsumptionModel::kSpot ? zone.spot_pool : zone.on_demand_pool) =
          static_cast<int>(p);
    }
  }
  for (CapacityPool& pool : pools) {
    if (pool.availability && pool.zone_capacity < 0) {
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

int64_t Fleet::UnitsOffered(int p, Timestamp now, const std::vector<int64_t>& used) const {
  const CapacityPool& pool = pools[p];
  int64_t units = pool.UnitsAvailableAt(now, epoch);
  if (pool.zone_capacity >= 0 && pool.model == ConsumptionModel::kSpot) {
    const ZoneCapacity& zone = zone_capacity[pool.zone_capacity];
    const int64_t on_demand = zone.on_demand_pool >= 0 ? used[zone.on_demand_pool] : 0;
    units = std::min(units, SpotUnitsLeft(zone, pool.units, now - epoch, on_demand));
  }
  return units;
}

Duration Fleet::BootTime(std::string_view machine_type) const {
  if (auto it = boot_time.find(std::string(machine_type)); it != boot_time.end()) return it->second;
  if (auto it = boot_time.find("default"); it != boot_time.end()) return it->second;
  return std::chrono::minutes(5);
}

double Fleet::NodeFailureRate(const CapacityPool& pool) const {
  if (pool.failures_per_node_hour) return *pool.failures_per_node_hour;
  if (pool.elastic) return 0;  // no node rows to fail
  const MachineType* machine = FindMachineType(pool.machine_type);
  if (machine == nullptr) return 0;
  const int accelerators =
      machine->is_tpu ? machine->tpu_chips_per_host : machine->accelerator_count;
  return failures_per_accelerator_hour * accelerators;
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

// What a node of `machine` carries, as its price sees it; chips_per_host overrides the catalog's
// (0: the catalog's).
cost::PricedNode PricedNodeOf(const MachineType& machine, int chips_per_host) {
  cost::PricedNode node;
  node.tpu = machine.is_tpu;
  node.tpu_family = machine.tpu_family;
  node.tpu_chips = chips_per_host > 0 ? chips_per_host : machine.tpu_chips_per_host;
  node.gpu = machine.accelerator;
  node.gpus = machine.accelerator_count;
  node.vcpus = machine.vcpus;
  return node;
}

}  // namespace

double CapacityPool::NodeHourPrice(const std::string& asked, int attached_gpus) const {
  if (elastic) return ListPricePerNodeHour(asked, model, "", 0);
  if (attached != AcceleratorType::kUnspecified) {
    return ListPricePerNodeHour(asked, attached, attached_gpus, model);
  }
  return price_per_node_hour;
}

std::string CapacityPool::ElasticVmPrefix(const std::string& asked,
                                          const std::string& owner) const {
  return zone + "-" + asked + "-" + std::string(ConsumptionModelName(model)) + "-" + owner + "-";
}

double ListPricePerNodeHour(std::string_view machine_type, ConsumptionModel model,
                            std::string_view term, int chips_per_host) {
  const MachineType* machine = FindMachineType(machine_type);
  if (machine == nullptr) return 0;
  return cost::NodeHourPrice(PricedNodeOf(*machine, chips_per_host), model, term);
}

double ListPricePerNodeHour(std::string_view machine_type, AcceleratorType attached, int count,
                            ConsumptionModel model) {
  const MachineType* machine = FindMachineType(machine_type);
  std::optional<cost::PricedNode> vm;
  if (machine != nullptr) vm = PricedNodeOf(*machine, 0);
  return cost::AttachedNodeHourPrice(vm, attached, count, model);
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
