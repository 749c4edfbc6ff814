#include "storage/memory/memory_resource_store.h"

#include <algorithm>
#include <tuple>

#include "services/cost/resource_cost.h"
#include "services/persistent_resources/resource_holdings.h"
#include "storage/recorded_operation.h"

namespace trainyard::storage::memory {
namespace {

bool Held(const MemoryNode& n, int64_t uid) { return n.resource_uid == uid; }

// A client's change keeps what only the fleet and the store write: the error, the times it did
// not set, the placement and verdict (storage/resource_row.cpp's EncodeResourceSpec stores the
// spec alone).
PersistentResource StoredForm(const PersistentResource& asked, const PersistentResource& stored) {
  PersistentResource out = asked;
  out.error = stored.error;
  out.create_time = stored.create_time;
  out.start_time = stored.start_time;
  out.trainyard = stored.trainyard;
  for (ResourcePool& pool : out.resource_pools) pool.used_replica_count = 0;
  return out;
}

}  // namespace

void MemoryResourceStore::RecordOperationLocked(const ResourceChange& change) {
  Operation op = RecordedOperation(change);
  op.update_time = op.create_time;
  const Timestamp at = op.create_time;
  db_.operations[op.id] = std::move(op);
  if (change.superseded_operation) {
    db_.FinishOperationLocked(
        *change.superseded_operation, std::nullopt,
        RpcStatus{static_cast<int>(Code::kAborted), change.superseded_message}, at);
  }
}

MemoryResource* MemoryResourceStore::AtVersionLocked(const ResourceRecord& record) {
  auto it = db_.resources.find(record.uid);
  if (it == db_.resources.end() || it->second.record.version != record.version) return nullptr;
  return &it->second;
}

Status MemoryResourceStore::Insert(const ResourceChange& change) {
  std::lock_guard lock(db_.mu);
  const ResourceRecord& rec = change.record;
  for (const auto& [uid, r] : db_.resources) {
    if (r.record.project_number == rec.project_number && r.record.location == rec.location &&
        r.record.resource_id == rec.resource_id) {
      return AlreadyExists("persistent resource " + rec.resource_id + " exists");
    }
  }
  if (db_.operations.count(change.operation.id) > 0) return Aborted("operation id collision");
  MemoryResource stored;
  stored.record = rec;
  stored.record.uid = db_.next_resource_uid++;
  stored.record.version = 1;
  stored.record.ready_at.reset();
  stored.record.held_since.reset();
  stored.record.hourly_price_micros = 0;
  stored.record.cancel_requested = false;
  PersistentResource& r = stored.record.resource;
  r.update_time = r.create_time;
  r.error.reset();
  r.start_time.reset();
  r.trainyard.reset();
  for (ResourcePool& pool : r.resource_pools) pool.used_replica_count = 0;
  RecordOperationLocked(change);
  db_.resources.emplace(stored.record.uid, std::move(stored));
  return Status::Ok();
}

StatusOr<ResourceRecord> MemoryResourceStore::Get(int64_t project_number,
                                                  const std::string& location,
                                                  const std::string& resource_id) {
  std::lock_guard lock(db_.mu);
  for (const auto& [uid, r] : db_.resources) {
    if (r.record.project_number == project_number && r.record.location == location &&
        r.record.resource_id == resource_id) {
      return db_.ReadResourceLocked(r);
    }
  }
  return NotFound("persistent resource not found");
}

StatusOr<std::vector<ResourceRecord>> MemoryResourceStore::List(const ListResourcesQuery& query) {
  std::lock_guard lock(db_.mu);
  // Newest first: (create_time DESC, uid DESC), after the cursor.
  std::vector<std::pair<Timestamp, int64_t>> keys;
  for (const auto& [uid, r] : db_.resources) {
    if (r.record.project_number != query.project_number || r.record.location != query.location) {
      continue;
    }
    const std::pair<Timestamp, int64_t> key{*r.record.resource.create_time, uid};
    if (query.after && !(key < std::pair{query.after->create_time, query.after->id})) continue;
    keys.push_back(key);
  }
  std::sort(keys.rbegin(), keys.rend());
  std::vector<ResourceRecord> out;
  for (const auto& [at, uid] : keys) {
    if (static_cast<int>(out.size()) > query.limit) break;
    out.push_back(db_.ReadResourceLocked(db_.resources.at(uid)));
  }
  return out;
}

StatusOr<std::optional<Operation>> MemoryResourceStore::Update(const ResourceChange& change) {
  std::lock_guard lock(db_.mu);
  const ResourceRecord& rec = change.record;
  MemoryResource* stored = AtVersionLocked(rec);
  if (stored == nullptr) return std::optional<Operation>();
  ResourceRecord& row = stored->record;
  row.resource = StoredForm(rec.resource, row.resource);
  row.operation_id = rec.operation_id;
  ++row.version;
  // A reboot or resize forgets when the nodes were last ready: the fleet readies them again.
  if (rec.resource.state == ResourceState::kRebooting ||
      rec.resource.state == ResourceState::kUpdating) {
    row.ready_at.reset();
  }
  RecordOperationLocked(change);
  return std::optional(RecordedOperation(change));
}

StatusOr<bool> MemoryResourceStore::MarkRunning(const ResourceRecord& record, Timestamp now) {
  std::lock_guard lock(db_.mu);
  MemoryResource* stored = AtVersionLocked(record);
  if (stored == nullptr) return false;
  PersistentResource& r = stored->record.resource;
  r.state = ResourceState::kRunning;
  if (!r.start_time) r.start_time = now;
  r.update_time = now;
  stored->record.operation_id.reset();
  ++stored->record.version;
  // Booted nodes are READY for its jobs; idle ones count as idle from now.
  for (auto& [pool_id, slots] : db_.nodes) {
    for (MemoryNode& n : slots) {
      if (!Held(n, record.uid) || n.job_id) continue;
      const std::optional<NodeState> booted =
          NodeStateMachine::Next(n.state, NodeEvent::kResourceBooted);
      if (!booted) continue;
      n.state = *booted;
      n.since = now;
    }
  }
  if (record.operation_id) {
    db_.FinishOperationLocked(*record.operation_id, RunningResponse(record, now), std::nullopt,
                              now);
  }
  return true;
}

StatusOr<bool> MemoryResourceStore::StartReboot(const ResourceRecord& record, Timestamp ready_at,
                                                Timestamp now,
                                                const std::vector<StateUpdate>& stops) {
  std::lock_guard lock(db_.mu);
  MemoryResource* stored = AtVersionLocked(record);
  if (stored == nullptr || stored->record.resource.state != ResourceState::kRebooting) return false;
  // Every stop applies, or none (the job moved on meanwhile: next pass).
  for (const StateUpdate& stop : stops) {
    const MemoryJob* job = db_.FindJobLocked(stop.id);
    if (job == nullptr || job->record.version != stop.expected_version ||
        job->record.job.state != stop.transition.from()) {
      return false;
    }
  }
  stored->record.ready_at = ready_at;
  stored->record.resource.update_time = now;
  ++stored->record.version;
  // A job that fails gives its nodes back first; they reboot with the idle ones.
  for (const StateUpdate& stop : stops) db_.ApplyLocked(stop);
  for (auto& [pool_id, slots] : db_.nodes) {
    for (MemoryNode& n : slots) {
      if (!Held(n, record.uid)) continue;
      // An idle node boots again (its image cache is on disk and survives); a job's is down
      // until ready_at, as after a failure: the failure simulator repairs it then.
      const bool holds_job = n.job_id.has_value();
      const std::optional<NodeState> next = NodeStateMachine::Next(
          n.state, holds_job ? NodeEvent::kFailed : NodeEvent::kResourceReboot, {holds_job});
      if (!next) continue;
      n.state = *next;
      n.since = now;
      if (holds_job) {
        n.ready_at = ready_at;
        n.preempt_at.reset();
      }
    }
  }
  return true;
}

StatusOr<std::vector<JobRecord>> MemoryResourceStore::JobsHoldingNodes(
    const ResourceRecord& record) {
  std::lock_guard lock(db_.mu);
  std::set<int64_t> ids;
  for (const auto& [pool_id, slots] : db_.nodes) {
    for (const MemoryNode& n : slots) {
      if (Held(n, record.uid) && n.job_id) ids.insert(*n.job_id);
    }
  }
  std::vector<JobRecord> out;
  for (int64_t id : ids) {
    const MemoryJob* job = db_.FindJobLocked(id);
    if (job == nullptr) continue;
    const JobState s = job->record.job.state;
    if (s == JobState::kPending || s == JobState::kRunning) out.push_back(job->record);
  }
  return out;
}

StatusOr<bool> MemoryResourceStore::Resize(const ResourceRecord& record,
                                           const std::vector<PoolResize>& pools, Timestamp ready_at,
                                           Timestamp now, std::string& why) {
  std::lock_guard lock(db_.mu);
  MemoryResource* stored = AtVersionLocked(record);
  if (stored == nullptr || stored->record.resource.state != ResourceState::kUpdating) return false;
  // Every pool's nodes are chosen before any moves: a pool that cannot move yet leaves all as
  // they are and says why.
  std::vector<std::pair<bool, std::vector<MemoryNode*>>> moves;
  for (const auto& [pool_id, nodes] : ResizeNodeDeltas(*record.resource.trainyard, pools)) {
    const bool grow = nodes > 0;
    const int64_t count = grow ? nodes : -nodes;
    std::vector<std::pair<std::tuple<int, int64_t>, MemoryNode*>> candidates;
    std::vector<MemoryNode>& slots = db_.nodes[pool_id];
    for (size_t i = 0; i < slots.size(); ++i) {
      MemoryNode& n = slots[i];
      if (n.job_id) continue;
      const auto ordinal = static_cast<int64_t>(i);
      if (grow && !n.resource_uid &&
          (n.state == NodeState::kReady || n.state == NodeState::kDeleted)) {
        // Warm ones first, then by ordinal.
        candidates.push_back({{n.state == NodeState::kReady ? 0 : 1, ordinal}, &n});
      } else if (!grow && Held(n, record.uid)) {
        candidates.push_back({{0, -ordinal}, &n});  // the highest idle nodes go back
      }
    }
    std::sort(candidates.begin(), candidates.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    const int64_t found = std::min<int64_t>(count, static_cast<int64_t>(candidates.size()));
    if (found != count) {
      why = ResizeWaitReason(pool_id, count, found, grow);
      stored->record.resource.trainyard->reason_code = "NO_CAPACITY";
      stored->record.resource.trainyard->reason_message = why;
      return false;
    }
    std::vector<MemoryNode*> chosen;
    for (int64_t k = 0; k < count; ++k) chosen.push_back(candidates[static_cast<size_t>(k)].second);
    moves.emplace_back(grow, std::move(chosen));
  }
  for (auto& [grow, chosen] : moves) {
    for (MemoryNode* n : chosen) {
      if (grow) {
        n->resource_uid = record.uid;
        n->state = *NodeStateMachine::Next(n->state, NodeEvent::kHeld);
        n->since = now;
      } else {
        n->resource_uid.reset();
        MemoryDatabase::GiveBack(*n, n->keep_warm, now);
      }
    }
  }
  std::map<std::string, std::vector<int64_t>> held;
  for (const auto& [pool_id, slots] : db_.nodes) {
    for (size_t i = 0; i < slots.size(); ++i) {
      if (Held(slots[i], record.uid)) held[pool_id].push_back(static_cast<int64_t>(i));
    }
  }
  const JobAdmission placement = ResizedPlacement(*record.resource.trainyard, pools, held);
  ResourceRecord& row = stored->record;
  ResourceFleetStatus& fleet = *row.resource.trainyard;
  fleet.zone = placement.zone;
  fleet.pools = placement.pools;
  fleet.reason_code.clear();
  fleet.reason_message.clear();
  row.ready_at = ready_at;
  // The old price accrues up to now; the new one bills from now.
  stored->cost_micros += cost::HoldCostMicros(row.hourly_price_micros, row.held_since, now);
  row.held_since = now;
  row.hourly_price_micros = placement.hourly_price_micros;
  ++row.version;
  return true;
}

Status MemoryResourceStore::ResizeWaits(const ResourceRecord& record, const std::string& code,
                                        const std::string& why) {
  std::lock_guard lock(db_.mu);
  auto it = db_.resources.find(record.uid);
  if (it == db_.resources.end()) return Status::Ok();
  ResourceFleetStatus& fleet = it->second.record.resource.trainyard
                                   ? *it->second.record.resource.trainyard
                                   : it->second.record.resource.trainyard.emplace();
  fleet.reason_code = code;
  fleet.reason_message = why;
  return Status::Ok();
}

StatusOr<bool> MemoryResourceStore::Autoscale(const ResourceRecord& record,
                                              const PersistentResource& resized, Timestamp now) {
  std::lock_guard lock(db_.mu);
  MemoryResource* stored = AtVersionLocked(record);
  if (stored == nullptr || stored->record.resource.state != ResourceState::kRunning) return false;
  ResourceRecord& row = stored->record;
  PersistentResource next = StoredForm(resized, row.resource);
  next.state = ResourceState::kUpdating;
  next.update_time = now;
  row.resource = std::move(next);
  row.ready_at.reset();
  ++row.version;
  return true;
}

StatusOr<std::map<std::string, int64_t>> MemoryResourceStore::IdleNodes(
    const ResourceRecord& record, Timestamp since) {
  std::lock_guard lock(db_.mu);
  std::map<std::string, int64_t> out;
  for (const auto& [pool_id, slots] : db_.nodes) {
    for (const MemoryNode& n : slots) {
      if (Held(n, record.uid) && !n.job_id && n.state == NodeState::kReady && n.since <= since) {
        ++out[pool_id];
      }
    }
  }
  return out;
}

StatusOr<std::vector<JobRef>> MemoryResourceStore::JobsOn(const ResourceRecord& record) {
  std::lock_guard lock(db_.mu);
  std::vector<JobRef> out;
  auto project = db_.projects_by_number.find(record.project_number);
  if (project == db_.projects_by_number.end()) return out;
  for (const auto& [id, job] : db_.JobsLocked()) {
    const JobRecord& r = job.record;
    if (r.project_number == record.project_number && r.location == record.location &&
        r.job.job_spec.persistent_resource_id == record.resource_id && !IsTerminal(r.job.state)) {
      out.push_back(JobRef{ParentRef{project->second.id, r.location}, std::to_string(id)});
    }
  }
  return out;
}

StatusOr<bool> MemoryResourceStore::Remove(const ResourceRecord& record, Timestamp now,
                                           const std::optional<RpcStatus>& error) {
  std::lock_guard lock(db_.mu);
  for (const auto& [pool_id, slots] : db_.nodes) {
    for (const MemoryNode& n : slots) {
      if (Held(n, record.uid) && n.job_id) return false;  // its jobs are still stopping
    }
  }
  if (AtVersionLocked(record) == nullptr) return false;
  db_.resources.erase(record.uid);
  // The nodes go back to their pools as a job's do: reservation nodes stay warm, the rest are
  // given back; down nodes stay down.
  for (auto& [pool_id, slots] : db_.nodes) {
    for (MemoryNode& n : slots) {
      if (!Held(n, record.uid)) continue;
      n.resource_uid.reset();
      MemoryDatabase::GiveBack(n, n.keep_warm, now);
    }
  }
  if (record.operation_id) {
    if (error) {
      db_.FinishOperationLocked(*record.operation_id, std::nullopt, error, now);
    } else {
      db_.FinishOperationLocked(*record.operation_id, kEmptyResponseJson, std::nullopt, now);
    }
  }
  return true;
}

Operation* MemoryOperationStore::FindLocked(int64_t project_number, const std::string& location,
                                            int64_t id) {
  auto it = db_.operations.find(id);
  if (it == db_.operations.end() || it->second.project_number != project_number ||
      it->second.location != location) {
    return nullptr;
  }
  return &it->second;
}

StatusOr<Operation> MemoryOperationStore::Get(int64_t project_number, const std::string& location,
                                              int64_t id) {
  std::lock_guard lock(db_.mu);
  const Operation* op = FindLocked(project_number, location, id);
  if (op == nullptr) return NotFound("operation not found");
  return *op;
}

StatusOr<std::vector<Operation>> MemoryOperationStore::List(const ListOperationsQuery& query) {
  std::lock_guard lock(db_.mu);
  std::vector<const Operation*> rows;
  for (const auto& [id, op] : db_.operations) {
    if (op.project_number != query.project_number || op.location != query.location) continue;
    if (query.parent && op.parent != *query.parent) continue;
    if (query.done && op.done != *query.done) continue;
    if (query.after && !(std::pair{op.create_time, op.id} <
                         std::pair{query.after->create_time, query.after->id})) {
      continue;
    }
    rows.push_back(&op);
  }
  std::sort(rows.begin(), rows.end(), [](const Operation* a, const Operation* b) {
    return std::pair{a->create_time, a->id} > std::pair{b->create_time, b->id};
  });
  std::vector<Operation> out;
  for (const Operation* op : rows) {
    if (static_cast<int>(out.size()) > query.limit) break;
    out.push_back(*op);
  }
  return out;
}

Status MemoryOperationStore::RequestCancel(int64_t project_number, const std::string& location,
                                           int64_t id, Timestamp now) {
  std::lock_guard lock(db_.mu);
  Operation* op = FindLocked(project_number, location, id);
  if (op == nullptr) return NotFound("operation not found");
  op->cancel_requested = true;
  op->update_time = now;
  return Status::Ok();
}

Status MemoryOperationStore::Delete(int64_t project_number, const std::string& location,
                                    int64_t id) {
  std::lock_guard lock(db_.mu);
  if (FindLocked(project_number, location, id) == nullptr) return NotFound("operation not found");
  db_.operations.erase(id);
  return Status::Ok();
}

}  // namespace trainyard::storage::memory
