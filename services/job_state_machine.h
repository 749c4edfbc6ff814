#pragma once
// The one owner of CustomJob transitions. Every writer (the API, the scheduler, the runtime
// executor, the failure simulator) asks this class for a transition value; storage applies that
// value as one compare-and-set on (id, version, state) and records the event with its true
// from-state. What a transition does to the row besides the state (the admission, its cost, the
// run time a stopped job keeps, the scheduling note) is decided here, never in SQL.
#include <optional>
#include <string>
#include <vector>

#include "services/model/custom_job.h"
#include "services/runtime/job_run.h"
#include "services/status.h"

namespace trainyard {

// What the storage row must hold for a transition to apply: the job as its writer last read it.
struct JobSnapshot {
  int64_t id = 0;
  int64_t version = 0;
  JobState state = JobState::kUnspecified;
  bool started = false;  // has a start_time (first RUNNING) already
};

JobSnapshot SnapshotOf(int64_t id, int64_t version, const CustomJob& job);

// Where an admitted job runs and what it costs an hour (QUEUED → PENDING).
struct JobAdmission {
  std::string zone;
  std::vector<PlacedPoolStatus> pools;
  int64_t hourly_price_micros = 0;
  // How long the simulated fleet takes to boot the placement's cold nodes and pull the image
  // where it is not cached; a simulated runtime starts the replicas that much later.
  Duration startup{};
};

// The scheduling reason a transition leaves on the job (`trainyard.reasonCode`); an empty code
// clears it.
struct SchedulingNote {
  std::string code;
  std::string message;
};

struct JobTransition {
  JobState from = JobState::kUnspecified;
  JobState to = JobState::kUnspecified;
  Timestamp at{};
  std::string reason;                   // kept as a job event
  std::optional<Timestamp> start_time;  // stamped on the first RUNNING
  std::optional<Timestamp> end_time;    // stamped on a terminal state
  std::optional<RpcStatus> error;       // FAILED and CANCELLED carry one
  // When the runtime next looks at the job. nullopt: not until another writer moves it, and the
  // executor's lease goes with it.
  std::optional<Timestamp> next_action_at;
  std::optional<JobAdmission> admission;  // set on admission
  bool ends_admission = false;            // the admission's cost so far is accrued
  bool clears_admission = false;          // back in the queue: placement and price go
  // A RUNNING gang stopped before its end (preempted, a node failed, retried): it keeps the work
  // its checkpoints hold and the time since the last one is redone.
  bool interrupts_run = false;
  bool spot_restart = false;  // counts against the spot restarts
  std::optional<SchedulingNote> note;
  bool requires_nodes_up = false;        // applies only when none of the job's nodes is down
  std::optional<std::string> image_uri;  // RUNNING: cached on the job's nodes from now on
  std::optional<JobRun> run;             // the run as it is now (attempt, replicas)
  bool stops_replicas = false;           // the replicas are gone; the next start launches anew
};

class JobStateMachine {
 public:
  static bool IsAllowed(JobState from, JobState to);

  // The plain transition of `job` to `to` at `now` (the runtime's steps, cancel), or
  // FAILED_PRECONDITION if it is not allowed.
  static StatusOr<JobTransition> Transition(const JobSnapshot& job, JobState to, Timestamp now,
                                            std::string reason,
                                            std::optional<RpcStatus> error = std::nullopt);

  // QUEUED → PENDING on `admission`; the runtime launches its replicas once the simulated startup
  // (none for real runtimes) has passed, and reports when they are up.
  static StatusOr<JobTransition> Admit(const JobSnapshot& job, Timestamp now,
                                       JobAdmission admission, std::string message);
  // QUEUED → FAILED without ever running (a DWS request that waited too long, a job that can
  // never fit): RESOURCE_EXHAUSTED.
  static StatusOr<JobTransition> FailInQueue(const JobSnapshot& job, Timestamp now,
                                             std::string message);
  // PENDING/RUNNING → QUEUED: its capacity was taken (a higher priority, a spot reclaim). It keeps
  // its place (queue time is create time), its cost so far and its checkpointed work.
  static StatusOr<JobTransition> Requeue(const JobSnapshot& job, Timestamp now, std::string message,
                                         bool spot_restart);
  // PENDING/RUNNING → FAILED with `error` when its nodes went and it may not restart.
  static StatusOr<JobTransition> FailAdmitted(const JobSnapshot& job, Timestamp now,
                                              std::string message, RpcStatus error);
  // PENDING/RUNNING → FAILED when a spot reclaim finds no restarts left (STOCKOUT,
  // RESOURCE_EXHAUSTED).
  static StatusOr<JobTransition> Stockout(const JobSnapshot& job, Timestamp now,
                                          std::string message);
  // PENDING/RUNNING → PENDING: a node under the gang failed; it holds its nodes and waits for the
  // repair, keeping its checkpointed work.
  static StatusOr<JobTransition> StopForRepair(const JobSnapshot& job, Timestamp now,
                                               std::string message);
  // PENDING → PENDING: the last node it waited for is repaired; replicas restart at `resume_at`.
  static StatusOr<JobTransition> ResumeAfterRepair(const JobSnapshot& job, Timestamp now,
                                                   Timestamp resume_at, std::string message);
};

}  // namespace trainyard
