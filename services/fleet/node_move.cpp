#include "services/fleet/node_move.h"

namespace trainyard {

std::optional<NodeMove> PlanNodeMove(std::string pool_id, int64_t ordinal, NodeState from,
                                     NodeEvent event, int64_t owner, NodeFacts facts) {
  std::optional<NodeState> to = NodeStateMachine::Next(from, event, facts);
  if (!to) return std::nullopt;
  NodeMove move;
  move.pool_id = std::move(pool_id);
  move.ordinal = ordinal;
  move.from = from;
  move.to = *to;
  move.owner = owner;
  return move;
}

NodeMove PlanGiveBack(std::string pool_id, int64_t ordinal, NodeState from, bool warm,
                      int64_t owner) {
  const NodeGivenBack back = NodeStateMachine::GiveBack(from, warm);
  NodeMove move;
  move.pool_id = std::move(pool_id);
  move.ordinal = ordinal;
  move.from = from;
  move.to = back.to;
  move.owner = owner;
  move.keeps_images = back.keeps_images;
  move.keeps_since = back.keeps_since;
  return move;
}

}  // namespace trainyard
