#pragma once
// Node moves applied as compare-and-sets. services/fleet/node_state_machine.h decides where each
// node goes from the state this transaction read it in; the statement here only sets that state
// where the node is still in the one read (`nodes.state = v.from_state`), and says which moves
// found their node moved meanwhile (a lost race) instead of choosing a state of its own. The
// moves themselves are planned in services/fleet/node_move.h.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "services/fleet/node_move.h"
#include "services/fleet/node_state_machine.h"
#include "services/time.h"
#include "storage/pg.h"

namespace trainyard::storage {

// NodeStateMachine::GiveBack for every state a node may be in, cold and warm, and
// RunThenGiveBack for the same (`ran`: the job's run started and ended in the write that gives
// the node back), as the arrays a statement releasing many nodes looks each node's move up in by
// the state it finds it in: the release stays one statement of the hot path, and its rule the
// machine's.
struct GiveBackTable {
  std::vector<NodeState> from;
  std::vector<bool> warm;
  std::vector<bool> ran;
  std::vector<NodeGivenBack> back;
};
GiveBackTable MachineGiveBackTable();
// NodeStateMachine's move for `event` (with `facts`) from every state that may leave by it, as
// two parameters, from and to (smallint[] each): a statement moving nodes it did not read first
// (the runtime's BUSY on a run, the failure simulator's sweeps, a resource's boot) joins them as
// TY_EVENT_MOVES and sets each node to the target of the state it finds it in.
pg::Params EventMovesParams(NodeEvent event, NodeFacts facts = {});
// The states that leave by `event` (with `facts`), as SQL literals ("5" or "4, 5"), for a sweep
// to add `AND nodes.state IN (…)` beside its join with EventMovesParams: a parameter hides the
// states from the planner (a prepared statement's generic plan), literals let it use a partial
// index on them (nodes_unwell, migration 0018) instead of walking every node. It narrows nothing
// the moves do not: the same states, from the same machine.
std::string EventFromStatesSql(NodeEvent event, NodeFacts facts = {});
// `params` with EventMovesParams after them.
pg::Params WithEventMoves(pg::Params params, NodeEvent event, NodeFacts facts = {});
#define TY_EVENT_MOVES(from, to) \
  "unnest(" from "::smallint[], " to "::smallint[]) AS m(from_state, to_state)"

// The table as seven parameters: from (smallint[]), warm, ran, to, keeps_images, keeps_since,
// and whether the node took the run (NodeGivenBack::ran).
pg::Params GiveBackTableParams();

// What a move writes besides the state and its time, and what else its node must still be.
enum class NodeWrite {
  kClaimForJob,          // job_id = owner; no job on it, held by `holder` (or by no resource)
  kHoldForResource,      // resource_uid = owner; no job on it and held by no resource
  kUnclaim,              // job_id = NULL; it is the owner job's
  kUnhold,               // resource_uid = NULL; it is the owner resource's
  kRepaired,             // ready_at = NULL: its repair is done
  kReleaseFromResource,  // resource_uid = NULL, images and time kept as the move says; the
                         // owner resource's
};

// The one statement that applies `moves` (at `now`); its rows are the moves it applied.
pg::Statement NodeMovesStatement(NodeWrite write, const std::vector<NodeMove>& moves,
                                 Timestamp now);

struct NodeMovesApplied {
  std::vector<NodeMove> applied;
  std::vector<NodeMove> lost;  // the node had moved on (or was no longer the owner's): unchanged
};

// Splits `moves` by the rows of their NodeMovesStatement.
NodeMovesApplied SortNodeMoves(const std::vector<NodeMove>& moves, const pg::Result& r);

// NodeMovesStatement and SortNodeMoves in one round trip of `tx`.
StatusOr<NodeMovesApplied> ApplyNodeMoves(pg::Transaction& tx, NodeWrite write,
                                          const std::vector<NodeMove>& moves, Timestamp now);

}  // namespace trainyard::storage
