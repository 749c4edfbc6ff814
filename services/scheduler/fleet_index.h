#pragma once
// A fleet's pools numbered once for the scheduler's parts (docs/scheduler.md, "Parts"): zones per
// region, the pools a machine type may use per zone (its own, then the zone's elastic ones), and
// the cohort resource of each pool. Built when the scheduler is; never changes after.
#include <string>
#include <unordered_map>
#include <vector>

#include "services/fleet/fleet.h"
#include "services/scheduler/scheduler_job.h"

namespace trainyard {

struct FleetIndex {
  explicit FleetIndex(const Fleet& fleet);

  std::vector<std::string> zone_names;
  std::unordered_map<std::string, int> region_index;
  std::vector<std::vector<int>> zones_of_region;  // region index → zone indexes
  std::vector<int> zone_of_pool;
  // Types are numbered once (an attached-GPU pool's machine_type, "n1+NVIDIA_TESLA_T4", is its
  // type), and each pending job carries its numbers, so a fit looks pools up without hashing.
  std::unordered_map<std::string, int> type_ids;
  // zone index → type id → its pools and the zone's elastic pools; and the elastic alone.
  std::vector<std::vector<std::vector<int>>> typed_pools_of_zone;
  std::vector<std::vector<int>> elastic_pools_of_zone;
  std::vector<std::string> resource_of_pool;  // its cohort resource; "" when no cohort owns it
  std::unordered_map<std::string, int> cohort_of_project;

  const std::vector<int>& PoolsFor(int zone, const GangPool& gp) const {
    return gp.type_id < 0 ? elastic_pools_of_zone[zone] : typed_pools_of_zone[zone][gp.type_id];
  }
  int TypeIdOf(const GangPool& gp) const;
  // -1 when the fleet has no such zone.
  int ZoneIndex(const std::string& zone) const;
};

}  // namespace trainyard
