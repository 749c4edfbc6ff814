#include "services/fleet/node_state.h"

#include <cstdio>

namespace trainyard {

std::string_view NodeStateName(NodeState state) {
  switch (state) {
    case NodeState::kProvisioning:
      return "PROVISIONING";
    case NodeState::kReady:
      return "READY";
    case NodeState::kBusy:
      return "BUSY";
    case NodeState::kPreempted:
      return "PREEMPTED";
    case NodeState::kFailed:
      return "FAILED";
    case NodeState::kRepairing:
      return "REPAIRING";
    case NodeState::kDeleted:
      return "DELETED";
  }
  return "UNKNOWN";
}

std::optional<NodeState> ParseNodeState(std::string_view name) {
  for (NodeState s : kAllNodeStates) {
    if (NodeStateName(s) == name) return s;
  }
  return std::nullopt;
}

std::string NodeName(const std::string& pool_id, int64_t ordinal) {
  std::string name = pool_id;
  for (char& c : name) {
    if (c == '/') c = '-';
  }
  char suffix[24];
  std::snprintf(suffix, sizeof(suffix), "-%04lld", static_cast<long long>(ordinal));
  return name + suffix;
}

}  // namespace trainyard
