#include "services/fleet/fault_injection.h"

namespace trainyard {
namespace {

bool HasSpotPool(const Fleet& fleet, std::string_view zone) {
  for (const CapacityPool& pool : fleet.pools) {
    if (pool.zone == zone && pool.model == ConsumptionModel::kSpot) return true;
  }
  return false;
}

bool HasZone(const Fleet& fleet, std::string_view zone) {
  for (const CapacityPool& pool : fleet.pools) {
    if (pool.zone == zone) return true;
  }
  return false;
}

Status ValidateNode(const Fleet& fleet, const FaultInjection& r, bool spot_only) {
  auto node = FindNode(fleet, r.node);
  if (!node) {
    return InvalidField("node", "no node named \"" + r.node +
                                    "\" in the fleet (names look like "
                                    "us-central1-a-a3-megagpu-8g-SPOT-0000)");
  }
  if (spot_only && fleet.FindPool(node->pool_id)->model != ConsumptionModel::kSpot) {
    return InvalidField("node", "node " + r.node + " is not a spot node");
  }
  return Status::Ok();
}

}  // namespace

std::string_view FaultKindName(FaultKind kind) {
  return kind == FaultKind::kNodeFailure ? "NODE_FAILURE" : "SPOT_PREEMPTION";
}

std::optional<FaultKind> ParseFaultKind(std::string_view name) {
  if (name == "NODE_FAILURE") return FaultKind::kNodeFailure;
  if (name == "SPOT_PREEMPTION") return FaultKind::kSpotPreemption;
  return std::nullopt;
}

Status ValidateFaultInjection(const Fleet& fleet, const FaultInjection& r) {
  if (r.kind == FaultKind::kNodeFailure) {
    if (r.node.empty()) return InvalidField("node", "is required: the name of the node to fail");
    if (!r.pool_id.empty() || !r.zone.empty()) {
      return InvalidField(r.pool_id.empty() ? "zone" : "pool",
                          "a node failure targets one node: give only \"node\"");
    }
    if (r.count || r.fraction) {
      return InvalidField(r.count ? "count" : "fraction", "a node failure hits exactly one node");
    }
    return ValidateNode(fleet, r, /*spot_only=*/false);
  }
  int targets = !r.node.empty() + !r.pool_id.empty() + !r.zone.empty();
  if (targets != 1) {
    return InvalidField(targets == 0 ? "pool" : (r.node.empty() ? "zone" : "node"),
                        "give exactly one of \"node\", \"pool\" or \"zone\"");
  }
  if (r.count && r.fraction) {
    return InvalidField("fraction", "give \"count\" or \"fraction\", not both");
  }
  if (r.count && *r.count < 1) return InvalidField("count", "must be a positive integer");
  if (r.fraction && !(*r.fraction > 0 && *r.fraction <= 1)) {
    return InvalidField("fraction", "must be a number in (0, 1]");
  }
  if (!r.node.empty()) {
    if (r.count || r.fraction) {
      return InvalidField(r.count ? "count" : "fraction", "a named node is preempted alone");
    }
    return ValidateNode(fleet, r, /*spot_only=*/true);
  }
  if (!r.pool_id.empty()) {
    const CapacityPool* pool = fleet.FindPool(r.pool_id);
    if (pool == nullptr) {
      return InvalidField("pool", "no pool \"" + r.pool_id +
                                      "\" in the fleet (ids look like "
                                      "us-central1-a/a3-megagpu-8g/SPOT)");
    }
    if (pool->model != ConsumptionModel::kSpot) {
      return InvalidField("pool", "pool " + r.pool_id + " is not a SPOT pool");
    }
    return Status::Ok();
  }
  if (!HasZone(fleet, r.zone)) {
    return InvalidField("zone", "no zone \"" + r.zone + "\" in the fleet");
  }
  if (!HasSpotPool(fleet, r.zone)) {
    return InvalidField("zone", "zone " + r.zone + " has no SPOT pool");
  }
  return Status::Ok();
}

StatusOr<FaultInjection> FaultInjector::Inject(FaultInjection request) {
  TY_RETURN_IF_ERROR(ValidateFaultInjection(fleet_, request));
  if (request.kind == FaultKind::kSpotPreemption && request.node.empty() && !request.count &&
      !request.fraction) {
    request.count = 1;
  }
  request.request_time = clock_.Now();
  return repository_.Insert(request);
}

}  // namespace trainyard
