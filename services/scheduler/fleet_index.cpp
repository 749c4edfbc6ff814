#include "services/scheduler/fleet_index.h"

#include <algorithm>

#include "services/jobs/catalog.h"

namespace trainyard {
namespace {

std::string RegionOfZone(const std::string& zone) {
  size_t dash = zone.rfind('-');
  return dash == std::string::npos ? zone : zone.substr(0, dash);
}

}  // namespace

FleetIndex::FleetIndex(const Fleet& fleet) {
  std::unordered_map<std::string, int> zone_index;
  for (size_t p = 0; p < fleet.pools.size(); ++p) {
    const CapacityPool& pool = fleet.pools[p];
    auto [zit, new_zone] = zone_index.try_emplace(pool.zone, static_cast<int>(zone_names.size()));
    if (new_zone) {
      zone_names.push_back(pool.zone);
      std::string region = pool.region.empty() ? RegionOfZone(pool.zone) : pool.region;
      auto [rit, new_region] =
          region_index.try_emplace(region, static_cast<int>(zones_of_region.size()));
      if (new_region) zones_of_region.emplace_back();
      zones_of_region[rit->second].push_back(zit->second);
    }
    zone_of_pool.push_back(zit->second);
  }
  resource_of_pool.assign(fleet.pools.size(), "");
  for (size_t p = 0; p < fleet.pools.size(); ++p) {
    if (fleet.pools[p].cohort >= 0) resource_of_pool[p] = CohortResource(fleet.pools[p]);
  }
  for (size_t c = 0; c < fleet.cohorts.size(); ++c) {
    for (const CohortMember& m : fleet.cohorts[c].members) {
      cohort_of_project[m.project] = static_cast<int>(c);
    }
  }
  for (const CapacityPool& pool : fleet.pools) {
    if (!pool.elastic) type_ids.try_emplace(pool.machine_type, static_cast<int>(type_ids.size()));
  }
  typed_pools_of_zone.assign(zone_names.size(), std::vector<std::vector<int>>(type_ids.size()));
  elastic_pools_of_zone.resize(zone_names.size());
  for (size_t p = 0; p < fleet.pools.size(); ++p) {
    const CapacityPool& pool = fleet.pools[p];
    if (pool.elastic) {
      elastic_pools_of_zone[zone_of_pool[p]].push_back(static_cast<int>(p));
    } else {
      typed_pools_of_zone[zone_of_pool[p]][type_ids.at(pool.machine_type)].push_back(
          static_cast<int>(p));
    }
  }
  for (size_t z = 0; z < zone_names.size(); ++z) {
    for (std::vector<int>& pools : typed_pools_of_zone[z]) {
      pools.insert(pools.end(), elastic_pools_of_zone[z].begin(), elastic_pools_of_zone[z].end());
    }
  }
}

int FleetIndex::TypeIdOf(const GangPool& gp) const {
  auto it = type_ids.find(gp.attached == AcceleratorType::kUnspecified
                              ? gp.machine_type
                              : AttachedPoolType(gp.machine_type, gp.attached));
  return it == type_ids.end() ? -1 : it->second;
}

int FleetIndex::ZoneIndex(const std::string& zone) const {
  auto it = std::find(zone_names.begin(), zone_names.end(), zone);
  return it == zone_names.end() ? -1 : static_cast<int>(it - zone_names.begin());
}

}  // namespace trainyard
