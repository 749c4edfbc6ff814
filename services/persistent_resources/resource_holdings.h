#pragma once
// What a persistent resource's held nodes come to, whichever store keeps them: the nodes each
// fleet pool gains or gives back in a resize, the placement and price a resize leaves, and the
// replicas its jobs use. Pure, so the PostgreSQL and the in-memory stores apply one rule.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "services/jobs/job_state_machine.h"
#include "services/persistent_resources/resource_fleet_store.h"

namespace trainyard {

// Per fleet pool: the nodes a resize to `pools` adds (positive) or gives back (negative). Two
// resource pools may hold nodes in one fleet pool; pools that do not move are left out, and so
// are elastic ones, whose VMs are made and deleted without node rows.
std::map<std::string, int64_t> ResizeNodeDeltas(
    const ResourceFleetStatus& status, const std::vector<ResourceFleetStore::PoolResize>& pools);

// Why a resize cannot start yet: a growing pool found `found` of the `count` free nodes it needs,
// or a shrinking one has fewer than `count` idle nodes to give back.
std::string ResizeWaitReason(const std::string& pool_id, int64_t count, int64_t found, bool grow);

// The placement a resize leaves, in resource-pool order: each pool's nodes are the ones its fleet
// pool holds for the resource (`held`: ordinals, ascending), handed out in ordinal order; an
// elastic pool keeps its first VMs and names new ones after the resource's highest number; and
// what they all cost an hour.
JobAdmission ResizedPlacement(const ResourceFleetStatus& status,
                              const std::vector<ResourceFleetStore::PoolResize>& pools,
                              const std::map<std::string, std::vector<int64_t>>& held);

// usedReplicaCount: the busy nodes of each fleet pool (`busy`), handed to the resource's pools
// that hold nodes there in order, each up to its replica count.
void SetUsedReplicaCounts(PersistentResource& resource, std::map<std::string, int64_t> busy);

}  // namespace trainyard
