#pragma once
// The one owner of a node slot's moves, as JobStateMachine is of a job's: for each event, the
// states a node may leave and the one it reaches. The in-memory stores (storage/memory/) ask it;
// so does every PostgreSQL node write: claims, holds, repairs and resizes apply its moves as
// compare-and-sets on the state they read, and the statements that move nodes unread (a job's
// release and run, failures, reclaims, a resource's boot) look its moves up by the state they
// find (storage/node_moves.h). The store property test holds the two to the same history.
//
//   DELETED ──claim──▶ PROVISIONING ──job runs──▶ BUSY ──given back──▶ READY (warm) / DELETED
//   READY   ──claim──▶ BUSY
//   live (PROVISIONING, READY, BUSY) ──reclaimed──▶ PREEMPTED ──gone──▶ DELETED
//   live ──failed──▶ FAILED ──repair starts──▶ REPAIRING ──repaired──▶ BUSY / READY / DELETED
#include <optional>
#include <string_view>

#include "services/fleet/node_state.h"

namespace trainyard {

enum class NodeEvent {
  kClaimed,         // a job takes the free node (a warm one is BUSY at once, a cold one boots)
  kHeld,            // a persistent resource takes the free node (a warm one stays READY)
  kUnclaimed,       // a claim in a commit that did not go through gives it back as it was
  kUnheld,          // the same for a hold
  kJobRunning,      // its job's replicas run on it
  kGivenBack,       // its holder lets it go: warm (a resource's, a keepBooted pool's) stays READY
  kReclaimed,       // spot capacity taken back
  kFailed,          // a node failure
  kRepairStarted,   // a failed node goes to repair
  kRepaired,        // back: to its job, warm, or given back
  kPreemptedGone,   // a reclaimed node's slot is free again (no job may wait on it)
  kResourceBooted,  // a persistent resource's booting nodes are up
  kResourceReboot,  // a persistent resource's idle nodes boot again
};

// What besides its state decides where a node goes.
struct NodeFacts {
  bool holds_job = false;  // a job is on it
  bool warm = false;       // a persistent resource's node, or a keepBooted pool's: kept booted
};

// A node given back (kGivenBack) and what it keeps: a down one stays down with its time and no
// image; a warm one stays READY with its images; any other is DELETED, its images gone.
struct NodeGivenBack {
  NodeState to = NodeState::kDeleted;
  bool keeps_images = false;
  bool keeps_since = false;  // its state_since stays (it did not move)
  // RunThenGiveBack: it took the job's run on the way (BUSY at the run's start, the image cached).
  bool ran = false;
};

class NodeStateMachine {
 public:
  // Where `event` takes a node in `from`, or nullopt when it may not happen there (the store
  // leaves the node as it is: a compare-and-set that matched nothing).
  static std::optional<NodeState> Next(NodeState from, NodeEvent event, NodeFacts facts = {});
  // A new slot's state: booted when `warm` (a keepBooted pool's), else DELETED (no VM yet).
  static NodeState Initial(bool warm);
  // kGivenBack with what the node keeps (`warm`: a persistent resource's or a keepBooted pool's).
  static NodeGivenBack GiveBack(NodeState from, bool warm);
  // kJobRunning and then kGivenBack, for a job whose run started and ended in one write: where
  // the second move takes the node from where the first left it.
  static NodeGivenBack RunThenGiveBack(NodeState from, bool warm);
  static bool IsLive(NodeState state);  // PROVISIONING, READY, BUSY
  static bool IsDown(NodeState state);  // PREEMPTED, FAILED, REPAIRING
  static bool IsFree(NodeState state);  // READY, DELETED: a holder may take it
};

}  // namespace trainyard
