#pragma once
// The control plane's state in memory: jobs with their leases and change feed, node slots,
// persistent resources and their operations, projects. What `simulate` runs the server's code on
// (storage/memory/memory_adapters.h): every adapter over it applies the same transitions
// (services/jobs/job_record_update.h) and node moves as the PostgreSQL stores, under one lock, so a
// run is exact and repeatable.
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "services/fleet/fleet.h"
#include "services/fleet/node_state.h"
#include "services/fleet/node_state_machine.h"
#include "services/jobs/job_repository.h"
#include "services/model/operation.h"
#include "services/persistent_resources/resource_repository.h"

namespace trainyard::storage::memory {

struct MemoryNode {
  NodeState state = NodeState::kDeleted;
  bool keep_warm = false;
  std::optional<int64_t> job_id;
  std::optional<int64_t> resource_uid;
  Timestamp since{};
  std::optional<Timestamp> preempt_at;
  std::optional<Timestamp> ready_at;
  std::vector<std::string> image_cache;  // least recently used first
};

// A persistent resource as its row holds it: the spec, state and times in `record.resource`, its
// placement, price and verdict in `record.resource.trainyard`; what it cost in holds that ended.
struct MemoryResource {
  ResourceRecord record;
  int64_t cost_micros = 0;
};

struct MemoryJob {
  JobRecord record;
  std::optional<std::string> lease_owner;
};

class MemoryDatabase {
 public:
  std::mutex mu;  // every adapter holds it for the whole of each call (a transaction)

  // The change feed: the sequence number each job was last changed at.
  std::map<int64_t, int64_t> changes;  // change_seq → job id
  int64_t next_seq = 0;
  int64_t live_jobs = 0;  // not in a terminal state
  // Jobs with a next action, by (next_action_at, id): those nobody holds, and each owner's.
  std::set<std::pair<Timestamp, int64_t>> unclaimed;
  std::map<std::string, std::set<std::pair<Timestamp, int64_t>>> owned;

  std::map<std::string, std::vector<MemoryNode>> nodes;  // pool id → slots by ordinal
  std::map<int64_t, std::set<std::pair<std::string, int64_t>>> nodes_of_job;
  std::optional<Timestamp> epoch;
  std::optional<int64_t> hazard_tick;

  std::map<int64_t, MemoryResource> resources;  // by uid
  int64_t next_resource_uid = 1;
  std::map<int64_t, Operation> operations;  // by id

  std::map<std::string, Project> projects_by_id;
  std::map<int64_t, Project> projects_by_number;
  int64_t next_project_number = 100000000001;  // as migrations/0001_init.sql numbers them

  // With `mu` held: a new job (its change stamped), or the transition as one compare-and-set on
  // (id, version, from-state, lease), with its nodes moved as storage/job_transition_sql.cpp moves
  // them. false when the job moved on.
  void InsertLocked(JobRecord record);
  // The one way to a job by id (nullptr when none), through the index.
  MemoryJob* FindJobLocked(int64_t id) {
    auto it = job_index_.find(id);
    return it == job_index_.end() ? nullptr : it->second;
  }
  const MemoryJob* FindJobLocked(int64_t id) const {
    auto it = job_index_.find(id);
    return it == job_index_.end() ? nullptr : it->second;
  }
  // Every job in id order, the order reads iterate in.
  const std::map<int64_t, MemoryJob>& JobsLocked() const { return jobs_; }
  void EraseJobLocked(int64_t id) {
    job_index_.erase(id);
    jobs_.erase(id);
  }
  // Every job, moved out (a finished replay's records), the index emptied with them.
  std::map<int64_t, MemoryJob> TakeJobsLocked() {
    job_index_.clear();
    return std::exchange(jobs_, {});
  }
  bool ApplyLocked(const StateUpdate& update);
  // Stamps a change on the job (the scheduler's feed) and re-files its next action.
  void TouchLocked(MemoryJob& job, const std::optional<Timestamp>& old_next,
                   const std::optional<std::string>& old_owner);
  MemoryNode* NodeLocked(const std::string& pool_id, int64_t ordinal);
  // The node taken by or given back from `job` (the index of each job's nodes follows).
  void SetNodeJobLocked(const std::string& pool_id, int64_t ordinal, std::optional<int64_t> job);
  // A holder gives its node back: down nodes stay down; warm ones stay READY with their cache;
  // the rest are DELETED (NodeStateMachine::GiveBack, as PostgreSQL's release looks it up).
  static void GiveBack(MemoryNode& node, bool warm, Timestamp at);
  // The resource as a read shows it: its name, every pool's usedReplicaCount and whether its
  // operation was asked to cancel (storage/resource_row.h's columns).
  ResourceRecord ReadResourceLocked(const MemoryResource& stored) const;
  // Finishes an unfinished operation with a response or an error; a finished one stays.
  void FinishOperationLocked(int64_t id, std::optional<std::string> response,
                             std::optional<RpcStatus> error, Timestamp at);

 private:
  // Jobs by id; the map keeps the id order reads iterate in. The index finds the same jobs by id
  // (FindJobLocked): a search of the map walks a tree of nodes spread over the heap, a cache miss
  // a level in a long replay (the verdict writes of a deep queue look up thousands a cycle).
  std::map<int64_t, MemoryJob> jobs_;
  std::unordered_map<int64_t, MemoryJob*> job_index_;
};

}  // namespace trainyard::storage::memory
