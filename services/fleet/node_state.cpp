#include "services/fleet/node_state.h"

#include <charconv>
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

std::optional<int64_t> NodeOrdinal(std::string_view name) {
  const size_t dash = name.rfind('-');
  if (dash == std::string_view::npos || dash + 1 == name.size()) return std::nullopt;
  int64_t ordinal = 0;
  const char* first = name.data() + dash + 1;
  const char* last = name.data() + name.size();
  auto [end, ec] = std::from_chars(first, last, ordinal);
  if (ec != std::errc() || end != last) return std::nullopt;
  return ordinal;
}

}  // namespace trainyard
