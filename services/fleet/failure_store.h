#pragma once
// What the failure simulator needs from storage. Every write is one short transaction that
// applies the job's transition (JobStateMachine) as a compare-and-set on its version and state, so
// a step that raced with the runtime or a cancel changes nothing and is retried on the next pass; a
// process killed mid-step loses nothing.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "services/fleet/fault_injection.h"
#include "services/fleet/fleet.h"
#include "services/fleet/node_state.h"
#include "services/jobs/job_repository.h"
#include "services/model/stop_notice.h"

namespace trainyard {

struct NodeStatus {
  NodeRef node;
  NodeState state = NodeState::kDeleted;
  std::optional<int64_t> job_id;
  Timestamp since{};
  std::optional<Timestamp> preempt_at;
  std::optional<Timestamp> ready_at;
};

// An injection applied in the same transaction as its effect.
struct InjectionDone {
  int64_t id = 0;
  std::string outcome;
};

struct SpotNotice {
  NodeRef node;
  Timestamp preempt_at{};
  std::string reason;  // for the job's reason and event
  // The job's reason code meanwhile: SPOT_NOTICE, or WINDOW_END for a calendar reservation's end.
  std::string code = std::string(kSpotNotice);
};

struct Reclaim {
  NodeRef node;
  Timestamp at{};
  // The PENDING/RUNNING job on the node: back to the queue, or FAILED when its restarts are spent
  // (JobStateMachine::Requeue or Stockout).
  std::optional<StateUpdate> job;
};

struct NodeFailure {
  NodeRef node;
  Timestamp at{};
  Timestamp repaired_at{};
  std::optional<StateUpdate> job;  // the job on the node: PENDING until repaired (StopForRepair)
  std::optional<InjectionDone> injection;
};

struct Repair {
  NodeRef node;
  Timestamp at{};
  // The job waiting for this node, resumed when no other of its nodes is still down
  // (ResumeAfterRepair).
  std::optional<StateUpdate> job;
};

class FailureStore {
 public:
  virtual ~FailureStore() = default;

  virtual StatusOr<std::vector<FaultInjection>> PendingInjections(int limit) = 0;
  // Marks an injection applied that had nothing to act on.
  virtual Status FinishInjection(const InjectionDone& done, Timestamp now) = 0;

  // Live nodes (PROVISIONING, READY, BUSY) of `pool_ids` with no notice yet, by pool and ordinal.
  virtual StatusOr<std::vector<NodeStatus>> LiveNodes(const std::vector<std::string>& pool_ids) = 0;
  virtual StatusOr<NodeStatus> Node(const NodeRef& node) = 0;
  // Live nodes whose notice ran out at `now`, in notice order.
  virtual StatusOr<std::vector<NodeStatus>> NoticesDue(Timestamp now) = 0;
  // REPAIRING nodes whose repair is done at `now`.
  virtual StatusOr<std::vector<NodeStatus>> RepairsDue(Timestamp now) = 0;
  virtual StatusOr<std::map<int64_t, JobRecord>> Jobs(const std::vector<int64_t>& ids) = 0;

  // The last hazard tick drawn (nullopt: none yet).
  virtual StatusOr<std::optional<int64_t>> HazardTick() = 0;
  // Gives the notices (skipping nodes that are no longer live), records the hazard tick drawn and
  // the injection applied, in one transaction.
  virtual Status GiveNotices(const std::vector<SpotNotice>& notices, Timestamp now,
                             std::optional<int64_t> hazard_tick,
                             const std::optional<InjectionDone>& injection) = 0;
  // false: the job moved on; nothing changed.
  virtual StatusOr<bool> ReclaimNode(const Reclaim& reclaim) = 0;
  virtual StatusOr<bool> FailNode(const NodeFailure& failure) = 0;
  // FAILED → REPAIRING.
  virtual Status StartRepairs(Timestamp now) = 0;
  virtual StatusOr<bool> FinishRepair(const Repair& repair) = 0;
  // PREEMPTED nodes whose linger ran out are DELETED (the slot is free again).
  virtual Status GiveBackPreempted(Timestamp now) = 0;
};

}  // namespace trainyard
