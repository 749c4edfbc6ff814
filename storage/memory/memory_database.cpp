#include "storage/memory/memory_database.h"

#include <algorithm>

#include "services/cost/accrual.h"
#include "services/jobs/job_record_update.h"
#include "services/persistent_resources/resource_holdings.h"
#include "services/resource_names.h"

namespace trainyard::storage::memory {
namespace {

// How many images a node keeps (storage/job_transition_sql.cpp's TY_IMAGE_CACHE_SIZE).
constexpr size_t kImageCacheSize = 8;

}  // namespace

void MemoryDatabase::TouchLocked(MemoryJob& job, const std::optional<Timestamp>& old_next,
                                 const std::optional<std::string>& old_owner) {
  JobRecord& r = job.record;
  if (r.change_seq > 0) changes.erase(r.change_seq);
  r.change_seq = ++next_seq;
  r.change_xid = 1;
  changes[r.change_seq] = r.id;
  if (old_next) {
    if (old_owner) {
      owned[*old_owner].erase({*old_next, r.id});
    } else {
      unclaimed.erase({*old_next, r.id});
    }
  }
  if (!r.next_action_at) job.lease_owner.reset();  // storage clears the lease with the action
  if (r.next_action_at) {
    if (job.lease_owner) {
      owned[*job.lease_owner].insert({*r.next_action_at, r.id});
    } else {
      unclaimed.insert({*r.next_action_at, r.id});
    }
  }
}

void MemoryDatabase::InsertLocked(JobRecord record) {
  const int64_t id = record.id;
  MemoryJob& job = jobs_[id];
  job_index_[id] = &job;  // map nodes never move
  job.record = std::move(record);
  if (!IsTerminal(job.record.job.state)) ++live_jobs;
  job.record.change_seq = 0;
  TouchLocked(job, std::nullopt, std::nullopt);
}

MemoryNode* MemoryDatabase::NodeLocked(const std::string& pool_id, int64_t ordinal) {
  auto it = nodes.find(pool_id);
  if (it == nodes.end() || ordinal < 0 || ordinal >= static_cast<int64_t>(it->second.size())) {
    return nullptr;
  }
  return &it->second[static_cast<size_t>(ordinal)];
}

void MemoryDatabase::SetNodeJobLocked(const std::string& pool_id, int64_t ordinal,
                                      std::optional<int64_t> job) {
  MemoryNode* node = NodeLocked(pool_id, ordinal);
  if (node == nullptr) return;
  if (node->job_id) {
    auto held = nodes_of_job.find(*node->job_id);
    if (held != nodes_of_job.end()) {
      held->second.erase({pool_id, ordinal});
      if (held->second.empty()) nodes_of_job.erase(held);
    }
  }
  node->job_id = job;
  if (job) nodes_of_job[*job].insert({pool_id, ordinal});
}

void MemoryDatabase::GiveBack(MemoryNode& node, bool warm, Timestamp at) {
  const NodeGivenBack back = NodeStateMachine::GiveBack(node.state, warm);
  node.state = back.to;
  if (!back.keeps_images) node.image_cache.clear();  // a cold or broken node keeps no image
  if (!back.keeps_since) node.since = at;
}

bool MemoryDatabase::ApplyLocked(const StateUpdate& update) {
  MemoryJob* found = FindJobLocked(update.id);
  if (found == nullptr) return false;
  MemoryJob& job = *found;
  const JobTransition& t = update.transition;
  if (job.record.version != update.expected_version || job.record.job.state != t.from()) {
    return false;
  }
  if (update.lease_owner && job.lease_owner != update.lease_owner) return false;
  auto held = nodes_of_job.find(update.id);
  if (t.requires_nodes_up() && held != nodes_of_job.end()) {
    for (const auto& [pool, ordinal] : held->second) {
      if (NodeStateMachine::IsDown(NodeLocked(pool, ordinal)->state)) return false;
    }
  }
  const std::optional<Timestamp> old_next = job.record.next_action_at;
  const std::optional<std::string> old_owner = job.lease_owner;
  ApplyToRecord(t, job.record);
  if (update.grant) job.lease_owner = update.grant->owner;  // kept only with a next action
  if (!IsTerminal(t.from()) && IsTerminal(t.to())) --live_jobs;
  TouchLocked(job, old_next, old_owner);
  if (held == nodes_of_job.end()) return true;
  // Its nodes follow the job (storage/job_transition_sql.cpp's TransitionNodeStatements): BUSY
  // once it runs, given back once it ends, both for a run that started and ended in one.
  if (const std::optional<Timestamp> ran = t.entered(JobState::kRunning)) {
    for (const auto& [pool, ordinal] : held->second) {
      MemoryNode& node = *NodeLocked(pool, ordinal);
      std::optional<NodeState> busy = NodeStateMachine::Next(node.state, NodeEvent::kJobRunning);
      if (!busy) continue;
      node.state = *busy;
      node.since = *ran;
      if (t.image_uri()) {
        auto& cache = node.image_cache;
        cache.erase(std::remove(cache.begin(), cache.end(), *t.image_uri()), cache.end());
        cache.push_back(*t.image_uri());
        if (cache.size() > kImageCacheSize) cache.erase(cache.begin());
      }
    }
  }
  if (IsTerminal(t.to()) || t.clears_admission()) {
    const auto taken = held->second;  // copied: giving back edits the index
    for (const auto& [pool, ordinal] : taken) {
      MemoryNode& node = *NodeLocked(pool, ordinal);
      SetNodeJobLocked(pool, ordinal, std::nullopt);
      node.preempt_at.reset();
      GiveBack(node, node.keep_warm || node.resource_uid.has_value(), t.at());
    }
  }
  return true;
}

ResourceRecord MemoryDatabase::ReadResourceLocked(const MemoryResource& stored) const {
  ResourceRecord rec = stored.record;
  PersistentResource& res = rec.resource;
  res.name = PersistentResourceName(rec.project_number, rec.location, rec.resource_id);
  ResourceFleetStatus& fleet = res.trainyard ? *res.trainyard : res.trainyard.emplace();
  fleet.hourly_price_usd = cost::Usd(rec.hourly_price_micros);
  std::map<std::string, int64_t> busy;
  for (const auto& [pool_id, slots] : nodes) {
    for (const MemoryNode& n : slots) {
      if (n.resource_uid == rec.uid && n.job_id) ++busy[pool_id];
    }
  }
  for (ResourcePool& pool : res.resource_pools) pool.used_replica_count = 0;
  SetUsedReplicaCounts(res, std::move(busy));
  rec.cancel_requested = false;
  if (rec.operation_id) {
    auto op = operations.find(*rec.operation_id);
    rec.cancel_requested = op != operations.end() && op->second.cancel_requested;
  }
  return rec;
}

void MemoryDatabase::FinishOperationLocked(int64_t id, std::optional<std::string> response,
                                           std::optional<RpcStatus> error, Timestamp at) {
  auto it = operations.find(id);
  if (it == operations.end() || it->second.done) return;
  Operation& op = it->second;
  op.done = true;
  op.response_json = std::move(response);
  op.error = std::move(error);
  op.progress_message.clear();
  op.update_time = at;
}

}  // namespace trainyard::storage::memory
