#include "storage/node_moves.h"

#include <set>

#include "storage/row_codec.h"

namespace trainyard::storage {
namespace {

// Every node move, whatever else it writes: a row of v a move, set only where its node is still
// in the state it was read in; $7 now. Its rows are the nodes it moved.
#define TY_NODE_MOVES(SET, WHERE)                                                              \
  "UPDATE nodes SET state = v.to_state, " SET                                                  \
  " FROM unnest($1::text[], $2::int[], $3::smallint[], $4::smallint[], $5::bigint[], "         \
  "$6::bigint[], $8::boolean[], $9::boolean[]) "                                               \
  "AS v(pool, ordinal, from_state, to_state, owner, holder, keeps_images, keeps_since) "       \
  "WHERE nodes.pool_id = v.pool AND nodes.ordinal = v.ordinal AND nodes.state = v.from_state " \
  "AND " WHERE " RETURNING nodes.pool_id, nodes.ordinal"
#define TY_NOW "state_since = " TY_TS("$7") ", "

constexpr const char* kClaimNodesForJobs = TY_NODE_MOVES(
    TY_NOW "job_id = v.owner",
    "nodes.job_id IS NULL AND nodes.resource_uid IS NOT DISTINCT FROM NULLIF(v.holder, 0)");
constexpr const char* kHoldNodesForResources = TY_NODE_MOVES(
    TY_NOW "resource_uid = v.owner", "nodes.job_id IS NULL AND nodes.resource_uid IS NULL");
constexpr const char* kUnclaimNodes =
    TY_NODE_MOVES(TY_NOW "job_id = NULL", "nodes.job_id = v.owner");
constexpr const char* kUnholdNodes =
    TY_NODE_MOVES(TY_NOW "resource_uid = NULL", "nodes.resource_uid = v.owner");
constexpr const char* kRepairedNodes = TY_NODE_MOVES(TY_NOW "ready_at = NULL", "true");
// What the node keeps is the move's (NodeStateMachine::GiveBack), not a rule of this statement.
constexpr const char* kReleaseNodesFromResources = TY_NODE_MOVES(
    "resource_uid = NULL, "
    "image_cache = CASE WHEN v.keeps_images THEN nodes.image_cache ELSE '{}' END, "
    "state_since = CASE WHEN v.keeps_since THEN nodes.state_since ELSE " TY_TS("$7") " END",
    "nodes.resource_uid = v.owner");
#undef TY_NOW
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
    case NodeWrite::kReleaseFromResource:
      return kReleaseNodesFromResources;
  }
  return kRepairedNodes;
}

}  // namespace

GiveBackTable MachineGiveBackTable() {
  GiveBackTable table;
  for (bool ran : {false, true}) {
    for (NodeState from : kAllNodeStates) {
      for (bool warm : {false, true}) {
        table.from.push_back(from);
        table.warm.push_back(warm);
        table.ran.push_back(ran);
        table.back.push_back(ran ? NodeStateMachine::RunThenGiveBack(from, warm)
                                 : NodeStateMachine::GiveBack(from, warm));
      }
    }
  }
  return table;
}

pg::Params EventMovesParams(NodeEvent event, NodeFacts facts) {
  std::vector<int> from, to;
  for (NodeState state : kAllNodeStates) {
    if (std::optional<NodeState> next = NodeStateMachine::Next(state, event, facts)) {
      from.push_back(static_cast<int>(state));
      to.push_back(static_cast<int>(*next));
    }
  }
  return pg::Params{NumberArray(from), NumberArray(to)};
}

std::string EventFromStatesSql(NodeEvent event, NodeFacts facts) {
  std::string out;
  for (NodeState state : kAllNodeStates) {
    if (!NodeStateMachine::Next(state, event, facts)) continue;
    if (!out.empty()) out += ", ";
    out += std::to_string(static_cast<int>(state));
  }
  return out.empty() ? "NULL" : out;  // no state leaves by it: `IN (NULL)` matches no node
}

pg::Params WithEventMoves(pg::Params params, NodeEvent event, NodeFacts facts) {
  for (std::optional<std::string>& moves : EventMovesParams(event, facts)) {
    params.push_back(std::move(moves));
  }
  return params;
}

pg::Params GiveBackTableParams() {
  static const pg::Params params = [] {
    const GiveBackTable table = MachineGiveBackTable();
    std::vector<int> from, to;
    std::vector<std::string> warm, ran, keeps_images, keeps_since, took_run;
    auto text = [](bool b) { return std::string(b ? "true" : "false"); };
    for (size_t i = 0; i < table.from.size(); ++i) {
      from.push_back(static_cast<int>(table.from[i]));
      warm.push_back(text(table.warm[i]));
      ran.push_back(text(table.ran[i]));
      to.push_back(static_cast<int>(table.back[i].to));
      keeps_images.push_back(text(table.back[i].keeps_images));
      keeps_since.push_back(text(table.back[i].keeps_since));
      took_run.push_back(text(table.back[i].ran));
    }
    return pg::Params{NumberArray(from),  TextArray(warm),         TextArray(ran),
                      NumberArray(to),    TextArray(keeps_images), TextArray(keeps_since),
                      TextArray(took_run)};
  }();
  return params;
}

pg::Statement NodeMovesStatement(NodeWrite write, const std::vector<NodeMove>& moves,
                                 Timestamp now) {
  std::vector<std::string> pools, keeps_images, keeps_since;
  std::vector<int64_t> ordinals, owners, holders;
  std::vector<int> from, to;
  for (const NodeMove& m : moves) {
    pools.push_back(m.pool_id);
    ordinals.push_back(m.ordinal);
    from.push_back(static_cast<int>(m.from));
    to.push_back(static_cast<int>(m.to));
    owners.push_back(m.owner);
    holders.push_back(m.holder);
    keeps_images.emplace_back(m.keeps_images ? "true" : "false");
    keeps_since.emplace_back(m.keeps_since ? "true" : "false");
  }
  return pg::Statement{SqlOf(write),
                       {TextArray(pools), NumberArray(ordinals), NumberArray(from), NumberArray(to),
                        NumberArray(owners), NumberArray(holders), MicrosParam(now),
                        TextArray(keeps_images), TextArray(keeps_since)}};
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
