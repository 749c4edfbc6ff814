#include "storage/memory/memory_failure_store.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "services/fleet/failure_model.h"

namespace trainyard::storage::memory {
namespace {

NodeStatus StatusOf(const std::string& pool_id, int64_t ordinal, const MemoryNode& n) {
  return NodeStatus{
      NodeRef{pool_id, ordinal}, n.state, n.job_id, n.since, n.preempt_at, n.ready_at};
}

}  // namespace

template <typename Keep, typename Key>
std::vector<NodeStatus> MemoryFailureStore::Select(Keep keep, Key key) {
  std::vector<std::tuple<Timestamp, std::string, int64_t>> picked;
  for (const auto& [pool_id, slots] : db_.nodes) {
    for (size_t i = 0; i < slots.size(); ++i) {
      if (keep(slots[i])) picked.emplace_back(key(slots[i]), pool_id, static_cast<int64_t>(i));
    }
  }
  std::sort(picked.begin(), picked.end());
  std::vector<NodeStatus> out;
  out.reserve(picked.size());
  for (const auto& [k, pool_id, ordinal] : picked) {
    out.push_back(StatusOf(pool_id, ordinal, *db_.NodeLocked(pool_id, ordinal)));
  }
  return out;
}

StatusOr<std::vector<NodeStatus>> MemoryFailureStore::LiveNodes(
    const std::vector<std::string>& pool_ids) {
  std::lock_guard lock(db_.mu);
  std::vector<NodeStatus> out;
  std::set<std::string> wanted(pool_ids.begin(), pool_ids.end());
  for (const std::string& pool_id : wanted) {
    auto it = db_.nodes.find(pool_id);
    if (it == db_.nodes.end()) continue;
    for (size_t i = 0; i < it->second.size(); ++i) {
      const MemoryNode& n = it->second[i];
      if (NodeStateMachine::IsLive(n.state) && !n.preempt_at) {
        out.push_back(StatusOf(pool_id, static_cast<int64_t>(i), n));
      }
    }
  }
  return out;
}

StatusOr<NodeStatus> MemoryFailureStore::Node(const NodeRef& node) {
  std::lock_guard lock(db_.mu);
  const MemoryNode* n = db_.NodeLocked(node.pool_id, node.ordinal);
  if (n == nullptr)
    return NotFound("node " + NodeName(node.pool_id, node.ordinal) + " has no slot");
  return StatusOf(node.pool_id, node.ordinal, *n);
}

StatusOr<std::vector<NodeStatus>> MemoryFailureStore::NoticesDue(Timestamp now) {
  std::lock_guard lock(db_.mu);
  return Select(
      [now](const MemoryNode& n) {
        return NodeStateMachine::IsLive(n.state) && n.preempt_at && *n.preempt_at <= now;
      },
      [](const MemoryNode& n) { return *n.preempt_at; });
}

StatusOr<std::vector<NodeStatus>> MemoryFailureStore::RepairsDue(Timestamp now) {
  std::lock_guard lock(db_.mu);
  return Select(
      [now](const MemoryNode& n) {
        return n.state == NodeState::kRepairing && n.ready_at && *n.ready_at <= now;
      },
      [](const MemoryNode& n) { return *n.ready_at; });
}

StatusOr<std::map<int64_t, JobRecord>> MemoryFailureStore::Jobs(const std::vector<int64_t>& ids) {
  std::lock_guard lock(db_.mu);
  std::map<int64_t, JobRecord> out;
  for (int64_t id : ids) {
    if (const MemoryJob* job = db_.FindJobLocked(id)) out.emplace(id, job->record);
  }
  return out;
}

StatusOr<std::optional<int64_t>> MemoryFailureStore::HazardTick() {
  std::lock_guard lock(db_.mu);
  return db_.hazard_tick;
}

Status MemoryFailureStore::GiveNotices(const std::vector<SpotNotice>& notices, Timestamp,
                                       std::optional<int64_t> hazard_tick,
                                       const std::optional<InjectionDone>&) {
  std::lock_guard lock(db_.mu);
  for (const SpotNotice& notice : notices) {
    MemoryNode* n = db_.NodeLocked(notice.node.pool_id, notice.node.ordinal);
    if (n == nullptr || !NodeStateMachine::IsLive(n->state) || n->preempt_at) continue;
    n->preempt_at = notice.preempt_at;
    if (!n->job_id) continue;
    MemoryJob* job = db_.FindJobLocked(*n->job_id);
    if (job == nullptr) continue;
    const JobState state = job->record.job.state;
    if (state != JobState::kPending && state != JobState::kRunning) continue;
    // A note, not a transition: the job's state and version stay.
    SchedulingStatus& status = *job->record.job.trainyard;
    status.reason_code = notice.code;
    status.reason_message = notice.reason;
  }
  if (hazard_tick) db_.hazard_tick = std::max(db_.hazard_tick.value_or(*hazard_tick), *hazard_tick);
  return Status::Ok();
}

StatusOr<bool> MemoryFailureStore::ReclaimNode(const Reclaim& reclaim) {
  std::lock_guard lock(db_.mu);
  MemoryNode* n = db_.NodeLocked(reclaim.node.pool_id, reclaim.node.ordinal);
  if (n == nullptr) return false;
  // Decided on the node as it is: the job's requeue below gives its nodes back first.
  std::optional<NodeState> preempted = NodeStateMachine::Next(n->state, NodeEvent::kReclaimed);
  if (!preempted) return false;
  if (reclaim.job && !db_.ApplyLocked(*reclaim.job)) return false;
  db_.SetNodeJobLocked(reclaim.node.pool_id, reclaim.node.ordinal, std::nullopt);
  n->state = *preempted;
  n->preempt_at.reset();
  n->image_cache.clear();
  n->since = reclaim.at;
  n->ready_at =
      reclaim.at + std::chrono::duration_cast<std::chrono::microseconds>(kPreemptedLinger);
  return true;
}

StatusOr<bool> MemoryFailureStore::FailNode(const NodeFailure& failure) {
  std::lock_guard lock(db_.mu);
  MemoryNode* n = db_.NodeLocked(failure.node.pool_id, failure.node.ordinal);
  if (n == nullptr) return false;
  std::optional<NodeState> failed = NodeStateMachine::Next(n->state, NodeEvent::kFailed);
  if (!failed) return false;
  if (failure.job && !db_.ApplyLocked(*failure.job)) return false;
  n->state = *failed;
  n->since = failure.at;
  n->ready_at = failure.repaired_at;
  n->preempt_at.reset();
  n->image_cache.clear();
  return true;
}

Status MemoryFailureStore::StartRepairs(Timestamp now) {
  std::lock_guard lock(db_.mu);
  for (auto& [pool_id, slots] : db_.nodes) {
    for (MemoryNode& n : slots) {
      std::optional<NodeState> next = NodeStateMachine::Next(n.state, NodeEvent::kRepairStarted);
      if (!next) continue;
      n.state = *next;
      n.since = now;
    }
  }
  return Status::Ok();
}

StatusOr<bool> MemoryFailureStore::FinishRepair(const Repair& repair) {
  std::lock_guard lock(db_.mu);
  MemoryNode* n = db_.NodeLocked(repair.node.pool_id, repair.node.ordinal);
  if (n == nullptr) return false;
  // Back with its job, BUSY; else warm (a keepBooted pool's, or a resource's) or given back.
  std::optional<NodeState> next =
      NodeStateMachine::Next(n->state, NodeEvent::kRepaired,
                             {n->job_id.has_value(), n->keep_warm || n->resource_uid.has_value()});
  if (!next) return false;
  n->state = *next;
  n->ready_at.reset();
  n->since = repair.at;
  // A job that moved on (cancelled, requeued) or still waits for another node stays as it is.
  if (repair.job) db_.ApplyLocked(*repair.job);
  return true;
}

Status MemoryFailureStore::GiveBackPreempted(Timestamp now) {
  std::lock_guard lock(db_.mu);
  for (auto& [pool_id, slots] : db_.nodes) {
    for (MemoryNode& n : slots) {
      if (!n.ready_at || *n.ready_at > now) continue;
      std::optional<NodeState> next =
          NodeStateMachine::Next(n.state, NodeEvent::kPreemptedGone, {n.job_id.has_value(), false});
      if (!next) continue;
      n.state = *next;
      n.since = *n.ready_at;
      n.ready_at.reset();
    }
  }
  return Status::Ok();
}

}  // namespace trainyard::storage::memory
