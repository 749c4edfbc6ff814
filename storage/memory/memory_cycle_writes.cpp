#include "storage/memory/memory_cycle_writes.h"

#include <set>

namespace trainyard::storage::memory {
namespace {

bool Free(const MemoryNode& node) { return !node.job_id && NodeStateMachine::IsFree(node.state); }

}  // namespace

Status MemoryCycleWrites::ReadFree(const std::vector<FreeNodesRead>& reads, FreeByPool& free,
                                   NodeStatesRead& states) {
  // Every free node of the pool: Take chooses from a bounded read what it would from all
  // (FreeNodesRead), so reading all here chooses as the PostgreSQL store does.
  for (const FreeNodesRead& read : reads) {
    const CapacityPool& pool = fleet_.pools[static_cast<size_t>(read.pool)];
    std::map<int64_t, std::vector<FreeNode>> by_holder;
    by_holder[read.holder];  // the holder read, even when it has none free
    const auto& slots = db_.nodes[pool.id];
    for (size_t i = 0; i < slots.size(); ++i) {
      const MemoryNode& n = slots[i];
      const int64_t holder = n.resource_uid.value_or(0);
      if (!Free(n) || (read.lowest != 0 && holder != read.holder)) continue;
      states.insert_or_assign({pool.id, static_cast<int64_t>(i)}, n.state);
      by_holder[holder].push_back(
          FreeNode{static_cast<int64_t>(i), n.state == NodeState::kReady, n.image_cache});
    }
    for (auto& [holder, nodes] : by_holder) {
      free.insert_or_assign({read.pool, holder},
                            FreeUnits(pool.hosts_per_unit, nodes, pool.block_nodes));
    }
  }
  return Status::Ok();
}

Status MemoryCycleWrites::Mark() {
  saved_.emplace();
  saved_->next_seq = db_.next_seq;
  saved_->live_jobs = db_.live_jobs;
  return Status::Ok();
}

Status MemoryCycleWrites::ReleaseMark() {
  saved_.reset();
  return Status::Ok();
}

Status MemoryCycleWrites::RollbackToMark() {
  if (!saved_) return Internal("no savepoint to roll back to");
  for (const auto& [id, job] : saved_->jobs) RestoreJob(id, job);
  for (const auto& [key, node] : saved_->nodes) {
    db_.SetNodeJobLocked(key.first, key.second, node.job_id);  // the index of each job's nodes
    *db_.NodeLocked(key.first, key.second) = node;
  }
  for (const auto& [uid, resource] : saved_->resources) db_.resources[uid] = resource;
  db_.next_seq = saved_->next_seq;
  db_.live_jobs = saved_->live_jobs;
  saved_.reset();
  return Status::Ok();
}

void MemoryCycleWrites::SaveJob(int64_t id) {
  if (!saved_ || saved_->jobs.contains(id)) return;
  const MemoryJob* job = db_.FindJobLocked(id);
  if (job == nullptr) return;
  saved_->jobs.emplace(id, *job);
  auto held = db_.nodes_of_job.find(id);
  if (held == db_.nodes_of_job.end()) return;
  for (const auto& [pool, ordinal] : held->second) SaveNode(pool, ordinal);
}

void MemoryCycleWrites::SaveNode(const std::string& pool_id, int64_t ordinal) {
  if (!saved_ || saved_->nodes.contains({pool_id, ordinal})) return;
  const MemoryNode* node = db_.NodeLocked(pool_id, ordinal);
  if (node != nullptr) saved_->nodes.emplace(std::make_pair(pool_id, ordinal), *node);
}

void MemoryCycleWrites::SaveResource(int64_t uid) {
  if (!saved_ || saved_->resources.contains(uid)) return;
  auto it = db_.resources.find(uid);
  if (it != db_.resources.end()) saved_->resources.emplace(uid, it->second);
}

void MemoryCycleWrites::RestoreJob(int64_t id, const MemoryJob& saved) {
  MemoryJob& job = *db_.FindJobLocked(id);  // saved jobs are never erased within a cycle
  const JobRecord& now = job.record;
  if (now.change_seq > 0) db_.changes.erase(now.change_seq);
  if (now.next_action_at) {
    if (job.lease_owner) {
      db_.owned[*job.lease_owner].erase({*now.next_action_at, id});
    } else {
      db_.unclaimed.erase({*now.next_action_at, id});
    }
  }
  job = saved;
  const JobRecord& then = job.record;
  if (then.change_seq > 0) db_.changes[then.change_seq] = id;
  if (then.next_action_at) {
    if (job.lease_owner) {
      db_.owned[*job.lease_owner].insert({*then.next_action_at, id});
    } else {
      db_.unclaimed.insert({*then.next_action_at, id});
    }
  }
}

StatusOr<std::optional<JobSnapshot>> MemoryCycleWrites::LockJob(int64_t id) {
  const MemoryJob* job = db_.FindJobLocked(id);
  if (job == nullptr) return std::optional<JobSnapshot>();
  const JobRecord& r = job->record;
  return std::optional<JobSnapshot>(
      JobSnapshot{id, r.version, r.job.state, r.job.start_time.has_value()});
}

StatusOr<bool> MemoryCycleWrites::ApplyTransition(const StateUpdate& update) {
  SaveJob(update.id);
  return db_.ApplyLocked(update);
}

bool MemoryCycleWrites::MoveNode(const NodeMove& move, MoveKind kind, Timestamp now) {
  MemoryNode* node = db_.NodeLocked(move.pool_id, move.ordinal);
  if (node == nullptr || node->state != move.from) return false;
  switch (kind) {
    case MoveKind::kHold:
      if (node->job_id || node->resource_uid) return false;
      break;
    case MoveKind::kClaim:
      if (node->job_id || node->resource_uid.value_or(0) != move.holder) return false;
      break;
    case MoveKind::kUnclaim:
      if (node->job_id != move.owner) return false;
      break;
    case MoveKind::kUnhold:
      if (node->resource_uid != move.owner) return false;
      break;
  }
  SaveNode(move.pool_id, move.ordinal);
  node->state = move.to;
  node->since = now;
  switch (kind) {
    case MoveKind::kHold:
      node->resource_uid = move.owner;
      break;
    case MoveKind::kClaim:
      db_.SetNodeJobLocked(move.pool_id, move.ordinal, move.owner);
      break;
    case MoveKind::kUnclaim:
      db_.SetNodeJobLocked(move.pool_id, move.ordinal, std::nullopt);
      break;
    case MoveKind::kUnhold:
      node->resource_uid.reset();
      break;
  }
  return true;
}

StatusOr<NodeMoveBatch> MemoryCycleWrites::MoveNodes(const NodeMoveBatch& moves,
                                                     const std::vector<StateUpdate*>&,
                                                     Timestamp now) {
  const std::pair<MoveKind, const std::vector<NodeMove>*> kinds[] = {
      {MoveKind::kHold, &moves.holds},
      {MoveKind::kClaim, &moves.claims},
      {MoveKind::kUnclaim, &moves.unclaims},
      {MoveKind::kUnhold, &moves.unholds},
  };
  NodeMoveBatch applied;
  std::vector<NodeMove>* into[] = {&applied.holds, &applied.claims, &applied.unclaims,
                                   &applied.unholds};
  for (size_t i = 0; i < std::size(kinds); ++i) {
    for (const NodeMove& m : *kinds[i].second) {
      if (MoveNode(m, kinds[i].first, now)) into[i]->push_back(m);
    }
  }
  return applied;
}

bool MemoryCycleWrites::PlaceHold(const HoldPlan& plan, Timestamp now) {
  auto it = db_.resources.find(plan.resource_uid);
  if (it == db_.resources.end() || it->second.record.version != plan.version ||
      it->second.record.resource.state != ResourceState::kProvisioning) {
    return false;
  }
  SaveResource(plan.resource_uid);
  ResourceRecord& row = it->second.record;
  ResourceFleetStatus& fleet =
      row.resource.trainyard ? *row.resource.trainyard : row.resource.trainyard.emplace();
  fleet.zone = plan.placement.zone;
  fleet.pools = plan.placement.pools;
  fleet.reason_code.clear();
  fleet.reason_message.clear();
  row.ready_at = plan.ready_at;
  row.held_since = now;
  row.hourly_price_micros = plan.placement.hourly_price_micros;
  ++row.version;
  return true;
}

StatusOr<Admitted> MemoryCycleWrites::Admit(const std::vector<HoldPlan>& holds,
                                            const std::vector<StateUpdate>& jobs, Timestamp now) {
  Admitted out;
  for (const HoldPlan& plan : holds) {
    if (PlaceHold(plan, now)) out.resources.insert(plan.resource_uid);
  }
  for (const StateUpdate& update : jobs) {
    SaveJob(update.id);
    if (db_.ApplyLocked(update)) out.jobs.insert(update.id);
  }
  return out;
}

StatusOr<int> MemoryCycleWrites::FailHolds(const std::vector<HoldFailure>& failures,
                                           Timestamp now) {
  int failed = 0;
  for (const HoldFailure& f : failures) {
    auto it = db_.resources.find(f.resource_uid);
    if (it == db_.resources.end() || it->second.record.version != f.version ||
        it->second.record.resource.state != ResourceState::kProvisioning) {
      continue;
    }
    ResourceRecord& row = it->second.record;
    const RpcStatus error{static_cast<int>(Code::kResourceExhausted), f.message};
    if (row.operation_id) db_.FinishOperationLocked(*row.operation_id, std::nullopt, error, now);
    row.resource.state = ResourceState::kError;
    row.resource.error = error;
    row.resource.update_time = now;
    row.operation_id.reset();
    if (row.resource.trainyard) {
      row.resource.trainyard->reason_code.clear();
      row.resource.trainyard->reason_message.clear();
    }
    ++row.version;
    ++failed;
  }
  return failed;
}

StatusOr<int> MemoryCycleWrites::FailJobs(std::vector<StateUpdate>& failures) {
  int failed = 0;
  for (const StateUpdate& update : failures) failed += db_.ApplyLocked(update) ? 1 : 0;
  return failed;
}

Status MemoryCycleWrites::WriteNotices(const std::vector<PreemptionNotice>& notices, Timestamp) {
  for (const PreemptionNotice& n : notices) {
    MemoryJob* job = db_.FindJobLocked(n.job_id);
    if (job == nullptr) continue;
    const JobState state = job->record.job.state;
    if (state != JobState::kPending && state != JobState::kRunning) continue;
    SchedulingStatus& status = *job->record.job.trainyard;  // a note, as a verdict is
    status.reason_code = n.code;
    status.reason_message = n.message;
  }
  return Status::Ok();
}

Status MemoryCycleWrites::WriteHoldVerdicts(const std::vector<HoldVerdict>& verdicts) {
  for (const HoldVerdict& v : verdicts) {
    auto it = db_.resources.find(v.resource_uid);
    if (it == db_.resources.end()) continue;
    PersistentResource& r = it->second.record.resource;
    const bool placed = r.trainyard && !r.trainyard->zone.empty();
    if (r.state != ResourceState::kProvisioning || placed) continue;
    ResourceFleetStatus& fleet = r.trainyard ? *r.trainyard : r.trainyard.emplace();
    fleet.reason_code = std::string(ReasonCodeName(v.verdict.code));
    fleet.reason_message = v.verdict.message.str();
  }
  return Status::Ok();
}

StatusOr<int> MemoryCycleWrites::WriteVerdicts(const std::vector<VerdictUpdate>& verdicts,
                                               Timestamp) {
  int written = 0;
  for (const VerdictUpdate& v : verdicts) {
    MemoryJob* job = db_.FindJobLocked(v.job_id);
    if (job == nullptr || job->record.job.state != JobState::kQueued) continue;
    // A note, not a transition: the version and the change feed stay.
    SchedulingStatus& status = *job->record.job.trainyard;
    status.reason_code.assign(ReasonCodeName(v.verdict.code));  // into the memory it replaces
    status.reason_message = v.verdict.message.str();
    status.queue_position =
        v.verdict.position > 0 ? std::optional(v.verdict.position) : std::nullopt;
    ++written;
  }
  return written;
}

}  // namespace trainyard::storage::memory
