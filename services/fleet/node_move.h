#pragma once
// One node's move as the domain plans it: from the state it was read in to the one
// NodeStateMachine gives the event. A store applies it only where the node is still in `from`
// and reports the move lost otherwise, so the target state is never a store's own choice.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "services/fleet/node_state_machine.h"

namespace trainyard {

struct NodeMove {
  std::string pool_id;
  int64_t ordinal = 0;
  NodeState from = NodeState::kDeleted;
  NodeState to = NodeState::kDeleted;
  int64_t owner = 0;   // the job or resource the move is for
  int64_t holder = 0;  // a claim: the resource whose held node it must be (0: the pool's)
  // A node given back by a resource: what it keeps (NodeStateMachine::GiveBack).
  bool keeps_images = true;
  bool keeps_since = false;
};

// The move `event` makes of a node read in `from`; nullopt when the machine refuses it there.
std::optional<NodeMove> PlanNodeMove(std::string pool_id, int64_t ordinal, NodeState from,
                                     NodeEvent event, int64_t owner = 0, NodeFacts facts = {});
// The move of a node given back (kGivenBack) by `owner`, with what it keeps.
NodeMove PlanGiveBack(std::string pool_id, int64_t ordinal, NodeState from, bool warm,
                      int64_t owner);

// The states the nodes of one transaction were read in, by (pool, ordinal).
using NodeStatesRead = std::map<std::pair<std::string, int64_t>, NodeState>;

}  // namespace trainyard
