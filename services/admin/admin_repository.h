#pragma once
// What the read-only admin view needs from storage: node counts and pages, the queues, costs and a
// job's events. Typed rows only; storage/pg_admin_store implements it.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "services/fleet/node_state.h"
#include "services/model/custom_job.h"
#include "services/status.h"

namespace trainyard {

struct PoolNodeCounts {
  std::map<NodeState, int64_t> by_state;
  int64_t with_job = 0;       // nodes a job holds (PROVISIONING or BUSY for it)
  int64_t in_resources = 0;   // nodes a persistent resource holds
  int64_t resource_busy = 0;  // of them, nodes a job of the resource runs on
};

struct NodeRecord {
  std::string pool_id;
  int64_t ordinal = 0;
  std::string zone;
  std::string machine_type;
  NodeState state = NodeState::kDeleted;
  std::optional<int64_t> job_id;
  Timestamp since{};
  std::vector<std::string> image_cache;
  std::string persistent_resource;  // the resource that holds it (its name); "" for none
};

// Keyset position in node order (pool_id, ordinal).
struct NodeCursor {
  std::string pool_id;
  int64_t ordinal = 0;
};

struct NodeQuery {
  std::string pool;  // "" = any
  std::string zone;  // "" = any
  std::optional<NodeState> state;
  int limit = 100;
  std::optional<NodeCursor> after;
};

// Jobs per queue (project, region), state, consumption model of the placement ("" for none) and,
// for QUEUED jobs, the scheduler's reason code ("" before its first verdict).
struct QueueCount {
  std::string project_id;
  std::string location;
  JobState state = JobState::kUnspecified;
  int64_t jobs = 0;
  std::string consumption_model;
  std::string reason;
};

struct StateCount {
  JobState state = JobState::kUnspecified;
  int64_t jobs = 0;  // at most the cap asked for: the cap means "at least"
};

// A QUEUED job with the scheduler's verdict.
struct QueuedJobRecord {
  int64_t id = 0;
  std::string project_id;
  int64_t project_number = 0;
  std::string location;
  std::string display_name;
  std::map<std::string, std::string> labels;
  Timestamp create_time{};
  std::optional<int64_t> queue_position;
  std::string reason_code;
  std::string reason_message;
};

// Cost of a project's jobs that last ran under one consumption model ("" = never admitted).
struct ModelCost {
  std::string consumption_model;
  int64_t jobs = 0;
  int64_t accrued_micros = 0;  // finished admissions
  int64_t running_micros = 0;  // current admissions, up to `now`
  // Productive time (accrued at state changes) × the accelerators of each job, in µs.
  int64_t productive_accelerator_micros = 0;
  // The accrued cost over the productive accelerator-hours (both accrue as admissions end):
  // nullopt before any.
  std::optional<double> CostPerProductiveAcceleratorHour() const;
};

// All jobs there are (of every project, ended ones included) whose placement was under one
// consumption model: their cost and where their time went (goodput buckets accrued at each state
// change).
struct ModelTotals {
  ModelCost cost;
  JobGoodput time;
};

// What a persistent resource has cost: it bills its nodes from placement to deletion, and a
// deleted one keeps its whole cost here.
struct ResourceCost {
  std::string name;
  std::string consumption_model;  // of its first pool
  int64_t hourly_micros = 0;      // a deleted one: as it was last billed
  int64_t total_micros = 0;       // up to `now`, or to its deletion
  std::optional<Timestamp> deleted_at;
};

struct JobEvent {
  Timestamp time{};
  JobState from = JobState::kUnspecified;
  JobState to = JobState::kUnspecified;
  std::string reason;
};

class AdminRepository {
 public:
  virtual ~AdminRepository() = default;
  // Per pool id.
  virtual StatusOr<std::map<std::string, PoolNodeCounts>> NodeCounts() = 0;
  // Nodes of `pool_ids` held by jobs, per (pool id, project id).
  virtual StatusOr<std::map<std::pair<std::string, std::string>, int64_t>> NodesHeldByProject(
      const std::vector<std::string>& pool_ids) = 0;
  // Up to query.limit + 1 nodes in (pool_id, ordinal) order, so the caller knows if more exist.
  virtual StatusOr<std::vector<NodeRecord>> ListNodes(const NodeQuery& query) = 0;
  // Nodes a job holds (of `job_id`, or of every job), by job, pool id and ordinal.
  virtual StatusOr<std::vector<NodeRecord>> NodesHeldByJobs(std::optional<int64_t> job_id) = 0;
  // QUEUED, PENDING, RUNNING and CANCELLING jobs counted per queue.
  virtual StatusOr<std::vector<QueueCount>> QueueCounts() = 0;
  // One project's jobs in one location by state, each count stopping at `cap` (a page's counts
  // must cost the same over a million jobs as over ten). States without jobs are left out.
  virtual StatusOr<std::vector<StateCount>> StateCounts(int64_t project_number,
                                                        const std::string& location,
                                                        int64_t cap) = 0;
  // The first `per_queue` QUEUED jobs of every queue by queue position (then creation time).
  virtual StatusOr<std::vector<QueuedJobRecord>> QueuedJobs(int per_queue) = 0;
  // Per consumption model of the job's placement, with running costs accrued to `now`.
  virtual StatusOr<std::vector<ModelCost>> ProjectCosts(int64_t project_number, Timestamp now) = 0;
  // Per consumption model, over every job.
  virtual StatusOr<std::vector<ModelTotals>> FleetTotals(Timestamp now) = 0;
  // The project's persistent resources that hold (or held) nodes.
  virtual StatusOr<std::vector<ResourceCost>> ResourceCosts(int64_t project_number,
                                                            Timestamp now) = 0;
  // Oldest first; NOT_FOUND when the job does not exist under that project and location.
  virtual StatusOr<std::vector<JobEvent>> JobEvents(int64_t project_number,
                                                    const std::string& location,
                                                    int64_t job_id) = 0;
};

}  // namespace trainyard
