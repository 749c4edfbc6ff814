#pragma once
// What the domain needs from storage for jobs. storage/ implements it on PostgreSQL; the service
// rules are tested against that implementation, never against a mock.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "services/jobs/job_filter.h"
#include "services/jobs/job_state_machine.h"
#include "services/model/custom_job.h"
#include "services/model/job_run.h"
#include "services/model/operation.h"
#include "services/resource_names.h"
#include "services/status.h"

namespace trainyard {

// A job row: the resource plus the bookkeeping that never goes on the wire.
struct JobRecord {
  int64_t id = 0;
  int64_t project_number = 0;
  std::string location;
  CustomJob job;
  int64_t version = 1;
  std::optional<Timestamp> next_action_at;
  std::string project_id;
  int64_t change_seq = 0;
  uint64_t change_xid = 0;  // the transaction that last changed the job (the scheduler's feed)
  // Billing of the current admission: accrued cost of earlier ones plus hourly × time since
  // admitted_at (job.trainyard carries both).
  int64_t cost_micros = 0;
  int64_t hourly_price_micros = 0;
  // The run time whose work the job's checkpoints hold: a gang relaunched after a preemption, a
  // node failure or a retry resumes from there (services/jobs/workload_model.h).
  Duration checkpointed{};
  Duration checkpoint_interval{};        // 0: the job never checkpoints
  CheckpointCost checkpoint_cost;        // what each save and restore takes
  std::optional<Timestamp> state_since;  // when the job entered its current state
  int spot_restarts = 0;                 // restarts after spot preemptions so far (Vertex allows 6)
  int attempt = 0;                       // whole-job retries so far (Vertex allows 3)
  std::optional<JobRun> run;  // the launched replicas; nullopt until launched (and once stopped)
  // The reader left job.job_spec and job.labels out (SchedulerStore::JobChanges past the queue):
  // they never change, so a reader that kept what it made of them need not decode them again.
  bool without_spec = false;
};

// Keyset position for pagination: list order is (create_time DESC, id DESC).
struct JobCursor {
  Timestamp create_time{};
  int64_t id = 0;
};

// Which version of a job a read saw: enough to tell whether a row kept in memory is that row.
struct JobVersion {
  int64_t id = 0;
  int64_t version = 0;
};

struct ListJobsQuery {
  int64_t project_number = 0;
  std::string location;
  std::optional<FilterExpr> filter;
  int limit = 100;
  std::optional<JobCursor> after;
};

// What of a job's row, at one version, a transition's writes follow from (the cost its admission
// ran up, the goodput buckets, the checkpoint split): services/jobs/job_record_update.h computes
// the writes from it, and a store only applies them.
struct JobTransitionBasis {
  int64_t version = 0;
  std::optional<Timestamp> state_since;
  std::optional<Timestamp> update_time;  // when state_since is unknown
  bool started = false;                  // start_time is set
  std::optional<Timestamp> admitted_at;
  int64_t hourly_price_micros = 0;
  int64_t cost_micros = 0;
  JobGoodput goodput;
  Duration checkpointed{};
  Duration checkpoint_interval{};
  CheckpointCost checkpoint_cost;
  int spot_restarts = 0;
  Duration program_startup{};  // the admission's, for a run that ends
};

// A lease handed over with a write: the runtime `owner` holds the job from the write for
// `duration`, as if it had claimed it. The scheduler hands what it admits to its own process's
// runtime this way, so the job's row is not rewritten once more by a claim.
struct LeaseGrant {
  std::string owner;
  std::chrono::seconds duration{30};
};

// A transition applied as one compare-and-set on (id, version, from-state); fenced by the lease
// when lease_owner is set. basis: the row as the caller read it at expected_version, when it did
// (a store reads it otherwise, storage/job_transition_sql.h). grant: the lease it hands over.
struct StateUpdate {
  int64_t id = 0;
  int64_t expected_version = 0;
  JobTransition transition;
  std::optional<std::string> lease_owner;  // fence: only the lease holder may apply it
  std::optional<JobTransitionBasis> basis;
  std::optional<LeaseGrant> grant;  // kept only while the job has a next action
};

class ProjectRepository {
 public:
  virtual ~ProjectRepository() = default;
  // By id or number. create_if_missing registers a new project id (never a bare number).
  virtual StatusOr<Project> Resolve(const std::string& id_or_number, bool create_if_missing) = 0;
  // Every project registered, by id, at most `limit` of them (the console's project picker).
  virtual StatusOr<std::vector<Project>> List(int limit) = 0;
};

class JobRepository {
 public:
  virtual ~JobRepository() = default;
  virtual Status Insert(const JobRecord& record, const std::string& request_id) = 0;
  virtual StatusOr<JobRecord> Get(int64_t project_number, const std::string& location,
                                  int64_t id) = 0;
  // The same job, shared: a repository that keeps rows in memory hands out its copy instead of
  // copying it (storage/cached_job_store; a poll would otherwise copy the whole spec).
  virtual StatusOr<std::shared_ptr<const JobRecord>> GetShared(int64_t project_number,
                                                               const std::string& location,
                                                               int64_t id) {
    TY_ASSIGN_OR_RETURN(JobRecord record, Get(project_number, location, id));
    return std::make_shared<const JobRecord>(std::move(record));
  }
  // Up to query.limit + 1 rows, so the caller knows whether another page exists.
  virtual StatusOr<std::vector<JobRecord>> List(const ListJobsQuery& query) = 0;
  // The ids and versions of the rows List(query) returns, in its order, without the rows: a
  // caller that keeps rows in memory (storage/cached_job_store) then reads only those it lacks.
  virtual StatusOr<std::vector<JobVersion>> ListVersions(const ListJobsQuery& query) = 0;
  // The jobs with these ids that still exist, in any order.
  virtual StatusOr<std::vector<JobRecord>> ByIds(const std::vector<int64_t>& ids) = 0;
  // false when the row moved on (version changed, lease lost): the caller re-reads and decides.
  virtual StatusOr<bool> ApplyTransition(const StateUpdate& update) = 0;
  // Many transitions in one transaction (one commit for a whole runtime pass); each is still its
  // own compare-and-set, and the result says which applied, in order.
  virtual StatusOr<std::vector<bool>> ApplyTransitions(const std::vector<StateUpdate>& updates) = 0;
  // Deletes a terminal job and records the finished operation in one transaction.
  virtual Status DeleteWithOperation(int64_t project_number, const std::string& location,
                                     int64_t id, int64_t expected_version,
                                     const Operation& operation) = 0;
};

// What one Claim took: jobs nobody held, and jobs whose lease had expired (`taken_over` of them
// from another owner, the rest our own).
struct ClaimCounts {
  int64_t claimed = 0;
  int64_t expired = 0;
  int64_t taken_over = 0;
};

// The runtime's view: leases over active jobs (FOR UPDATE SKIP LOCKED, heartbeat, expiry).
class JobLeaseRepository {
 public:
  virtual ~JobLeaseRepository() = default;
  // Extends every lease `owner` holds; returns how many it still holds.
  virtual StatusOr<int64_t> Heartbeat(const std::string& owner, std::chrono::seconds lease) = 0;
  // Takes up to `limit` active jobs that nobody holds (or whose lease expired).
  virtual StatusOr<ClaimCounts> Claim(const std::string& owner, int limit,
                                      std::chrono::seconds lease) = 0;
  // Jobs held by `owner` whose next action is due at virtual time `now`.
  virtual StatusOr<std::vector<JobRecord>> Due(const std::string& owner, Timestamp now,
                                               int limit) = 0;
  // Gives back every lease `owner` holds (graceful shutdown); the jobs they were on.
  virtual StatusOr<std::vector<int64_t>> ReleaseAll(const std::string& owner) = 0;
  // The jobs with these ids that still exist (leased or not), for stopping stray replicas.
  virtual StatusOr<std::vector<JobRecord>> ByIds(const std::vector<int64_t>& ids) = 0;
  // The virtual time of the earliest next action among the jobs `owner` holds (nullopt: none).
  virtual StatusOr<std::optional<Timestamp>> NextDue(const std::string& owner) = 0;
};

}  // namespace trainyard
