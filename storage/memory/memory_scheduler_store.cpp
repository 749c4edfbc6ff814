#include "storage/memory/memory_scheduler_store.h"

#include "storage/memory/memory_cycle_writes.h"

#include <set>

namespace trainyard::storage::memory {

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
    out.push_back(db_.FindJobLocked(it->second)->record);  // the feed names stored jobs
    JobRecord& row = out.back();
    if (row.job.state != JobState::kQueued) {  // as PostgreSQL's feed (SchedulerStore::JobChanges)
      row.job.job_spec = CustomJobSpec{};
      row.job.labels.clear();
      row.run.reset();
      row.without_spec = true;
    }
  }
  return out;
}

StatusOr<SchedulerStore::LiveJobs> MemorySchedulerStore::ReadLiveJobs() {
  std::lock_guard lock(db_.mu);
  LiveJobs out;
  for (const auto& [seq, id] : db_.changes) {
    const JobRecord& r = db_.FindJobLocked(id)->record;  // the feed holds stored jobs
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

StatusOr<CommitOutcome> MemorySchedulerStore::Commit(const AdmissionPlanner& planner,
                                                     const CycleResult& cycle, Timestamp now) {
  std::lock_guard lock(db_.mu);  // the whole commit, as one transaction
  MemoryCycleWrites writes(db_, planner.fleet());
  return CommitCycle(planner, cycle, now, writes);
}

}  // namespace trainyard::storage::memory
