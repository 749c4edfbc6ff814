#include "storage/memory/memory_scheduler_store.h"

#include <set>

namespace trainyard::storage::memory {
namespace {

bool Free(const MemoryNode& node) { return !node.job_id && NodeStateMachine::IsFree(node.state); }

}  // namespace

StatusOr<Timestamp> MemorySchedulerStore::SyncNodes(const Fleet& fleet, Timestamp now) {
  std::lock_guard lock(db_.mu);
  for (const CapacityPool& pool : fleet.pools) {
    if (pool.elastic) continue;  // its VMs exist only while a job holds them
    std::vector<MemoryNode>& slots = db_.nodes[pool.id];
    const bool warm = pool.keep_booted;
    while (static_cast<int64_t>(slots.size()) < pool.nodes()) {
      MemoryNode node;
      node.keep_warm = warm;
      node.state = NodeStateMachine::Initial(warm);  // booted, or not made yet
      node.since = now;
      slots.push_back(std::move(node));
    }
  }
  if (!db_.epoch) db_.epoch = now;
  return *db_.epoch;
}

StatusOr<std::vector<JobRecord>> MemorySchedulerStore::JobChanges(const ChangeCursor& after,
                                                                  int limit) {
  std::lock_guard lock(db_.mu);
  std::vector<JobRecord> out;
  if (after.xid > 1) return out;  // every change here is stamped with xid 1
  const int64_t from = after.xid < 1 ? 0 : after.seq;
  for (auto it = db_.changes.upper_bound(from);
       it != db_.changes.end() && static_cast<int>(out.size()) < limit; ++it) {
    out.push_back(db_.jobs.at(it->second).record);
  }
  return out;
}

StatusOr<SchedulerStore::LiveJobs> MemorySchedulerStore::ReadLiveJobs() {
  std::lock_guard lock(db_.mu);
  LiveJobs out;
  for (const auto& [seq, id] : db_.changes) {
    const JobRecord& r = db_.jobs.at(id).record;
    if (!IsTerminal(r.job.state)) out.jobs.push_back(r);
  }
  out.cursor = ChangeCursor{1, db_.next_seq};  // every change here is stamped with xid 1
  return out;
}

StatusOr<SchedulerStore::UnitsDownView> MemorySchedulerStore::UnitsDown(const Fleet& fleet) {
  std::lock_guard lock(db_.mu);
  std::map<int64_t, std::map<std::string, std::set<int64_t>>> units;
  for (const auto& [pool_id, slots] : db_.nodes) {
    const CapacityPool* pool = fleet.FindPool(pool_id);
    if (pool == nullptr) continue;
    for (size_t i = 0; i < slots.size(); ++i) {
      const MemoryNode& n = slots[i];
      // Down, or booting for the resource that holds it (storage/pg_scheduler_store.cpp's).
      const bool booting_for_resource = n.resource_uid && n.state == NodeState::kProvisioning;
      if (n.job_id || !(NodeStateMachine::IsDown(n.state) || booting_for_resource)) continue;
      units[n.resource_uid.value_or(0)][pool_id].insert(static_cast<int64_t>(i) /
                                                        pool->hosts_per_unit);
    }
  }
  UnitsDownView out;
  for (auto& [uid, pools] : units) {
    std::map<std::string, int64_t>& into = uid == 0 ? out.pools : out.resources[uid];
    for (auto& [pool_id, set] : pools) into[pool_id] = static_cast<int64_t>(set.size());
  }
  return out;
}

StatusOr<std::vector<SchedulerStore::ResourceStamp>> MemorySchedulerStore::ResourceStamps() {
  std::lock_guard lock(db_.mu);
  std::vector<ResourceStamp> out;
  for (const auto& [uid, r] : db_.resources) {
    bool cancel = false;
    if (r.record.operation_id) {
      auto op = db_.operations.find(*r.record.operation_id);
      cancel = op != db_.operations.end() && op->second.cancel_requested;
    }
    out.push_back(ResourceStamp{uid, r.record.version, cancel});
  }
  return out;
}

StatusOr<std::vector<ResourceRecord>> MemorySchedulerStore::ResourcesByUid(
    const std::vector<int64_t>& uids) {
  std::lock_guard lock(db_.mu);
  std::vector<ResourceRecord> out;
  for (int64_t uid : uids) {
    auto it = db_.resources.find(uid);
    if (it != db_.resources.end()) out.push_back(db_.ReadResourceLocked(it->second));
  }
  return out;
}

void MemorySchedulerStore::LoadFreeLocked(const Fleet& fleet, const std::vector<int>& pools,
                                          FreeByPool& free, const std::set<int64_t>& releasing) {
  for (int p : pools) {
    const CapacityPool& pool = fleet.pools[static_cast<size_t>(p)];
    std::map<int64_t, std::vector<FreeNode>> by_holder;
    by_holder[0];  // the pool itself, even when it has none free
    const auto& slots = db_.nodes[pool.id];
    for (size_t i = 0; i < slots.size(); ++i) {
      const MemoryNode& n = slots[i];
      NodeState state = n.state;
      std::vector<std::string> cache = n.image_cache;
      if (n.job_id && releasing.count(*n.job_id) > 0) {
        const bool warm = n.keep_warm || n.resource_uid.has_value();
        state = *NodeStateMachine::Next(n.state, NodeEvent::kGivenBack, {false, warm});
        if (state != NodeState::kReady) cache.clear();
      } else if (!Free(n)) {
        continue;
      }
      if (!NodeStateMachine::IsFree(state)) continue;
      by_holder[n.resource_uid.value_or(0)].push_back(
          FreeNode{static_cast<int64_t>(i), state == NodeState::kReady, std::move(cache)});
    }
    for (auto& [holder, nodes] : by_holder) {
      free.insert_or_assign({p, holder}, FreeUnits(pool.hosts_per_unit, nodes, pool.block_nodes));
    }
  }
}

bool MemorySchedulerStore::AllFreeLocked(const std::vector<NodeClaim>& claims, int64_t holder) {
  for (const NodeClaim& claim : claims) {
    for (int64_t ordinal : claim.ordinals) {
      const MemoryNode* node = db_.NodeLocked(claim.pool_id, ordinal);
      if (node == nullptr || !Free(*node) || node->resource_uid.value_or(0) != holder) return false;
    }
  }
  return true;
}

bool MemorySchedulerStore::ApplyPlanLocked(const JobAdmissionPlan& plan, Timestamp now) {
  auto job = db_.jobs.find(plan.job_id);
  if (job == db_.jobs.end() || job->second.record.version != plan.version ||
      job->second.record.job.state != JobState::kQueued) {
    return false;  // the job moved on: its nodes stay free
  }
  if (!AllFreeLocked(plan.claims, plan.resource_uid)) return false;
  for (const NodeClaim& claim : plan.claims) {
    for (int64_t ordinal : claim.ordinals) {
      MemoryNode& node = *db_.NodeLocked(claim.pool_id, ordinal);
      node.state = *NodeStateMachine::Next(node.state, NodeEvent::kClaimed);
      node.since = now;
      db_.SetNodeJobLocked(claim.pool_id, ordinal, plan.job_id);
    }
  }
  return db_.ApplyLocked(StateUpdate{plan.job_id, plan.version, plan.transition, {}, {}});
}

bool MemorySchedulerStore::ApplyHoldLocked(const HoldPlan& plan, Timestamp now) {
  auto it = db_.resources.find(plan.resource_uid);
  if (it == db_.resources.end() || it->second.record.version != plan.version ||
      it->second.record.resource.state != ResourceState::kProvisioning) {
    return false;  // the resource moved on: its nodes stay free
  }
  if (!AllFreeLocked(plan.claims, /*holder=*/0)) return false;  // a hold takes the pools' own
  // READY nodes stay READY (with their cache); DELETED ones are provisioned for it.
  for (const NodeClaim& claim : plan.claims) {
    for (int64_t ordinal : claim.ordinals) {
      MemoryNode& node = *db_.NodeLocked(claim.pool_id, ordinal);
      node.resource_uid = plan.resource_uid;
      node.state = *NodeStateMachine::Next(node.state, NodeEvent::kHeld);
      node.since = now;
    }
  }
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

void MemorySchedulerStore::FailHoldLocked(const HoldFailure& f, Timestamp now) {
  auto it = db_.resources.find(f.resource_uid);
  if (it == db_.resources.end() || it->second.record.version != f.version ||
      it->second.record.resource.state != ResourceState::kProvisioning) {
    return;
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
}

StatusOr<CommitOutcome> MemorySchedulerStore::Commit(const AdmissionPlanner& planner,
                                                     const CycleResult& cycle, Timestamp now) {
  std::lock_guard lock(db_.mu);
  CommitOutcome outcome;
  FreeByPool free;
  LoadFreeLocked(planner.fleet(), planner.PoolsToRead(cycle), free);
  // Preemptions first, since they free nodes: all the victims and the admission, or nothing (as the
  // PostgreSQL store's savepoint does).
  for (const AdmissionDecision& a : cycle.admissions) {
    if (a.victims.empty()) continue;
    std::vector<StateUpdate> requeues;
    for (int64_t victim : a.victims) {
      auto it = db_.jobs.find(victim);
      if (it == db_.jobs.end()) break;
      const JobRecord& r = it->second.record;
      JobSnapshot snapshot{victim, r.version, r.job.state, r.job.start_time.has_value()};
      std::optional<JobTransition> t = planner.PlanVictim(a, snapshot, now);
      if (!t) break;
      requeues.push_back(StateUpdate{victim, r.version, std::move(*t), {}, {}});
    }
    auto job = db_.jobs.find(a.job_id);
    FreeByPool once_released;
    LoadFreeLocked(planner.fleet(), planner.PoolsToRead(a), once_released,
                   std::set<int64_t>(a.victims.begin(), a.victims.end()));
    if (requeues.size() != a.victims.size() || job == db_.jobs.end() ||
        job->second.record.version != a.version ||
        job->second.record.job.state != JobState::kQueued ||
        !planner.PlanJob(a, now, once_released)) {
      ++outcome.skipped;
      continue;
    }
    for (const StateUpdate& u : requeues) db_.ApplyLocked(u);
    LoadFreeLocked(planner.fleet(), planner.PoolsToRead(a), free);  // the victims' nodes
    std::optional<JobAdmissionPlan> plan = planner.PlanJob(a, now, free);
    // It fits: the plan on the nodes as the victims leave them just did.
    if (plan && ApplyPlanLocked(*plan, now)) {
      ++outcome.admitted;
    } else {
      ++outcome.skipped;
    }
    outcome.preempted += static_cast<int>(requeues.size());
  }
  // Then the holds and every other admission, in the PostgreSQL store's order.
  for (const HoldDecision& h : cycle.holds) {
    std::optional<HoldPlan> plan = planner.PlanHold(h, now, free);
    if (plan && ApplyHoldLocked(*plan, now)) {
      ++outcome.admitted;
    } else {
      ++outcome.skipped;
    }
  }
  for (const AdmissionDecision& a : cycle.admissions) {
    if (!a.victims.empty()) continue;
    std::optional<JobAdmissionPlan> plan = planner.PlanJob(a, now, free);
    if (plan && ApplyPlanLocked(*plan, now)) {
      ++outcome.admitted;
    } else {
      ++outcome.skipped;
    }
  }
  for (const HoldFailure& f : cycle.hold_failures) {
    const auto before = db_.resources.find(f.resource_uid);
    const bool applies = before != db_.resources.end() &&
                         before->second.record.resource.state == ResourceState::kProvisioning &&
                         before->second.record.version == f.version;
    FailHoldLocked(f, now);
    outcome.failed += applies ? 1 : 0;
  }
  for (const FailureDecision& f : cycle.failures) {
    TY_ASSIGN_OR_RETURN(JobTransition t, planner.PlanFailure(f, now));
    if (db_.ApplyLocked(StateUpdate{f.job_id, f.version, std::move(t), {}, {}})) ++outcome.failed;
  }
  for (const PreemptionNotice& n : cycle.notices) {
    auto it = db_.jobs.find(n.job_id);
    if (it == db_.jobs.end()) continue;
    const JobState state = it->second.record.job.state;
    if (state != JobState::kPending && state != JobState::kRunning) continue;
    SchedulingStatus& status = *it->second.record.job.trainyard;  // a note, as a verdict is
    status.reason_code = n.code;
    status.reason_message = n.message;
  }
  for (const HoldVerdict& v : cycle.hold_verdicts) {
    auto it = db_.resources.find(v.resource_uid);
    if (it == db_.resources.end()) continue;
    PersistentResource& r = it->second.record.resource;
    const bool placed = r.trainyard && !r.trainyard->zone.empty();
    if (r.state != ResourceState::kProvisioning || placed) continue;
    ResourceFleetStatus& fleet = r.trainyard ? *r.trainyard : r.trainyard.emplace();
    fleet.reason_code = std::string(ReasonCodeName(v.verdict.code));
    fleet.reason_message = v.verdict.message.str();
  }
  for (const VerdictUpdate& v : cycle.verdicts) {
    auto it = db_.jobs.find(v.job_id);
    if (it == db_.jobs.end() || it->second.record.job.state != JobState::kQueued) continue;
    // A note, not a transition: the version and the change feed stay.
    SchedulingStatus& status = *it->second.record.job.trainyard;
    status.reason_code = std::string(ReasonCodeName(v.verdict.code));
    status.reason_message = v.verdict.message.str();
    status.queue_position =
        v.verdict.position > 0 ? std::optional(v.verdict.position) : std::nullopt;
    ++outcome.verdicts;
  }
  return outcome;
}

}  // namespace trainyard::storage::memory
