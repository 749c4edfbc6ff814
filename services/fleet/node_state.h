#pragma once
// A node slot's state as the nodes table stores it (migrations/0002_fleet.sql), and its name.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trainyard {

enum class NodeState : int {
  kProvisioning = 1,
  kReady = 2,
  kBusy = 3,
  kPreempted = 4,
  kFailed = 5,
  kRepairing = 6,
  kDeleted = 7,
};
inline constexpr NodeState kAllNodeStates[] = {
    NodeState::kProvisioning, NodeState::kReady,     NodeState::kBusy,    NodeState::kPreempted,
    NodeState::kFailed,       NodeState::kRepairing, NodeState::kDeleted,
};

std::string_view NodeStateName(NodeState state);  // "PROVISIONING", …
std::optional<NodeState> ParseNodeState(std::string_view name);

// The node's name in placements and in the admin view: the pool id with '/' → '-', then the
// ordinal ("us-central1-a-a3-megagpu-8g-SPOT-0003").
std::string NodeName(const std::string& pool_id, int64_t ordinal);
// The number a node's name ends in: NodeName's ordinal, or on an elastic pool the VM's number
// within its job or resource (CapacityPool::ElasticVmPrefix); nullopt for a name without one.
std::optional<int64_t> NodeOrdinal(std::string_view name);

}  // namespace trainyard
