#include "services/persistent_resources/resource_holdings.h"

#include <algorithm>
#include <optional>

#include "services/cost/price.h"
#include "services/fleet/node_state.h"

namespace trainyard {

std::map<std::string, int64_t> ResizeNodeDeltas(
    const ResourceFleetStatus& status, const std::vector<ResourceFleetStore::PoolResize>& pools) {
  std::map<std::string, int64_t> units;
  std::map<std::string, int> hosts;
  for (size_t i = 0; i < pools.size() && i < status.pools.size(); ++i) {
    if (!pools[i].elastic_vm_prefix.empty()) continue;
    units[pools[i].pool_id] += pools[i].to_units - status.pools[i].units;
    hosts[pools[i].pool_id] = pools[i].hosts_per_unit;
  }
  std::map<std::string, int64_t> out;
  for (const auto& [pool_id, delta] : units) {
    if (delta != 0) out[pool_id] = delta * hosts[pool_id];
  }
  return out;
}

std::string ResizeWaitReason(const std::string& pool_id, int64_t count, int64_t found, bool grow) {
  if (grow) {
    return "pool " + pool_id + " has " + std::to_string(found) + " free nodes; the resize needs " +
           std::to_string(count);
  }
  return "the resize waits for jobs to leave " + std::to_string(count) + " nodes of pool " +
         pool_id;
}

JobAdmission ResizedPlacement(const ResourceFleetStatus& status,
                              const std::vector<ResourceFleetStore::PoolResize>& pools,
                              const std::map<std::string, std::vector<int64_t>>& held) {
  JobAdmission placement;
  placement.zone = status.zone;
  std::map<std::string, size_t> next;
  // An elastic name's next number: one past the highest any pool of the resource holds.
  std::map<std::string, int64_t> next_vm;
  for (const PlacedPoolStatus& placed : status.pools) {
    for (const std::string& name : placed.nodes) {
      const size_t dash = name.rfind('-');
      std::optional<int64_t> number = NodeOrdinal(name);
      if (dash == std::string::npos || !number) continue;
      int64_t& after = next_vm[name.substr(0, dash + 1)];
      after = std::max(after, *number + 1);
    }
  }
  for (size_t i = 0; i < pools.size() && i < status.pools.size(); ++i) {
    PlacedPoolStatus pool = status.pools[i];
    pool.units = pools[i].to_units;
    if (const std::string& prefix = pools[i].elastic_vm_prefix; !prefix.empty()) {
      pool.nodes.resize(std::min(pool.nodes.size(), static_cast<size_t>(pool.units)));
      while (static_cast<int64_t>(pool.nodes.size()) < pool.units) {
        pool.nodes.push_back(prefix + std::to_string(next_vm[prefix]++));
      }
      placement.hourly_price_micros +=
          cost::NodesHourlyMicros(pools[i].price_per_node_hour, pool.units);
      placement.pools.push_back(std::move(pool));
      continue;
    }
    pool.nodes.clear();
    auto list = held.find(pool.pool_id);
    for (int64_t n = 0; list != held.end() && n < pool.units * pools[i].hosts_per_unit &&
                        next[pool.pool_id] < list->second.size();
         ++n) {
      pool.nodes.push_back(NodeName(pool.pool_id, list->second[next[pool.pool_id]++]));
    }
    placement.hourly_price_micros +=
        cost::NodesHourlyMicros(pools[i].price_per_node_hour, pool.units * pools[i].hosts_per_unit);
    placement.pools.push_back(std::move(pool));
  }
  return placement;
}

void SetUsedReplicaCounts(PersistentResource& resource, std::map<std::string, int64_t> busy) {
  if (!resource.trainyard) return;
  const std::vector<PlacedPoolStatus>& placed = resource.trainyard->pools;
  for (size_t i = 0; i < resource.resource_pools.size() && i < placed.size(); ++i) {
    auto it = busy.find(placed[i].pool_id);
    if (it == busy.end()) continue;
    const int64_t used = std::min(it->second, resource.resource_pools[i].replica_count);
    resource.resource_pools[i].used_replica_count = used;
    it->second -= used;
  }
}

}  // namespace trainyard
