#include "storage/node_moves.h"

#include <set>

#include "storage/row_codec.h"

namespace trainyard::storage {
namespace {

// Every node move, whatever else it writes: a row of v a move, set only where its node is still
// in the state it was read in; $7 now. Its rows are the nodes it moved.
#define TY_NODE_MOVES(SET, WHERE)                                                                \
  "UPDATE nodes SET state = v.to_state, state_since = " TY_TS(                                   \
      "$7") ", " SET                                                                             \
            " FROM unnest($1::text[], $2::int[], $3::smallint[], $4::smallint[], $5::bigint[], " \
            "$6::bigint[]) AS v(pool, ordinal, from_state, to_state, owner, holder) "            \
            "WHERE nodes.pool_id = v.pool AND nodes.ordinal = v.ordinal AND nodes.state = "      \
            "v.from_state "                                                                      \
            "AND " WHERE " RETURNING nodes.pool_id, nodes.ordinal"

constexpr const char* kClaimNodesForJobs = TY_NODE_MOVES(
    "job_id = v.owner",
    "nodes.job_id IS NULL AND nodes.resource_uid IS NOT DISTINCT FROM NULLIF(v.holder, 0)");
constexpr const char* kHoldNodesForResources =
    TY_NODE_MOVES("resource_uid = v.owner", "nodes.job_id IS NULL AND nodes.resource_uid IS NULL");
constexpr const char* kUnclaimNodes = TY_NODE_MOVES("job_id = NULL", "nodes.job_id = v.owner");
constexpr const char* kUnholdNodes =
    TY_NODE_MOVES("resource_uid = NULL", "nodes.resource_uid = v.owner");
constexpr const char* kRepairedNodes = TY_NODE_MOVES("ready_at = NULL", "true");
#undef TY_NODE_MOVES

std::string_view SqlOf(NodeWrite write) {
  switch (write) {
    case NodeWrite::kClaimForJob:
      return kClaimNodesForJobs;
    case NodeWrite::kHoldForResource:
      return kHoldNodesForResources;
    case NodeWrite::kUnclaim:
      return kUnclaimNodes;
    case NodeWrite::kUnhold:
      return kUnholdNodes;
    case NodeWrite::kRepaired:
      return kRepairedNodes;
  }
  return kRepairedNodes;
}

}  // namespace

std::optional<NodeMove> PlanNodeMove(std::string pool_id, int64_t ordinal, NodeState from,
                                     NodeEvent event, int64_t owner, NodeFacts facts) {
  std::optional<NodeState> to = NodeStateMachine::Next(from, event, facts);
  if (!to) return std::nullopt;
  return NodeMove{std::move(pool_id), ordinal, from, *to, owner, 0};
}

pg::Statement NodeMovesStatement(NodeWrite write, const std::vector<NodeMove>& moves,
                                 Timestamp now) {
  std::vector<std::string> pools;
  std::vector<int64_t> ordinals, owners, holders;
  std::vector<int> from, to;
  for (const NodeMove& m : moves) {
    pools.push_back(m.pool_id);
    ordinals.push_back(m.ordinal);
    from.push_back(static_cast<int>(m.from));
    to.push_back(static_cast<int>(m.to));
    owners.push_back(m.owner);
    holders.push_back(m.holder);
  }
  return pg::Statement{SqlOf(write),
                       {TextArray(pools), NumberArray(ordinals), NumberArray(from), NumberArray(to),
                        NumberArray(owners), NumberArray(holders), MicrosParam(now)}};
}

NodeMovesApplied SortNodeMoves(const std::vector<NodeMove>& moves, const pg::Result& r) {
  std::set<std::pair<std::string, int64_t>> moved;
  for (int i = 0; i < r.rows(); ++i) moved.emplace(std::string(r.Get(i, 0)), r.GetInt64(i, 1));
  NodeMovesApplied out;
  for (const NodeMove& m : moves) {
    (moved.contains({m.pool_id, m.ordinal}) ? out.applied : out.lost).push_back(m);
  }
  return out;
}

StatusOr<NodeMovesApplied> ApplyNodeMoves(pg::Transaction& tx, NodeWrite write,
                                          const std::vector<NodeMove>& moves, Timestamp now) {
  if (moves.empty()) return NodeMovesApplied{};
  TY_ASSIGN_OR_RETURN(pg::Result r, tx.Exec(NodeMovesStatement(write, moves, now)));
  return SortNodeMoves(moves, r);
}

}  // namespace trainyard::storage
