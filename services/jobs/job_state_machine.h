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
#include "services/model/job_run.h"
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
  StartupDetail startup_detail;  // the slowest pool's boot and pull: startup is their sum
  // Each run's start-up once the nodes are ready (services/fleet/startup_model ProgramStartup):
  // the simulated runtime's first step comes that much after its replicas start.
  Duration program_startup{};
};

// The scheduling reason a transition leaves on the job (`trainyard.reasonCode`); an empty code
// clears it.
struct SchedulingNote {
  std::string code;
  std::string message;
};

// A state a transition passed through on its way, recorded as an event of its own and its time
// counted in its goodput bucket: a run that started and ended between two looks of the runtime
// (PENDING → RUNNING → SUCCEEDED) is one row write, not two.
struct JobPassage {
  JobState state = JobState::kUnspecified;
  Timestamp at{};
  std::string reason;
};

// A transition as JobStateMachine made it: what storage writes and the runtime is told. Only the
// state machine builds or changes one (its effects are its rules), so a caller cannot add an
// effect the rules do not allow; everyone else reads it.
class JobTransition {
 public:
  JobState from() const { return from_; }
  JobState to() const { return to_; }
  Timestamp at() const { return at_; }
  const std::string& reason() const { return reason_; }  // kept as a job event
  // The state it passed through from from() (from() → via → to()), if any.
  const std::optional<JobPassage>& via() const { return via_; }
  // When it entered `state`, on its way or at its end; nullopt when it did not.
  std::optional<Timestamp> entered(JobState state) const {
    if (via_ && via_->state == state) return via_->at;
    return to_ == state ? std::optional<Timestamp>(at_) : std::nullopt;
  }
  const std::optional<Timestamp>& start_time() const { return start_time_; }  // the first RUNNING
  const std::optional<Timestamp>& end_time() const { return end_time_; }      // a terminal state
  const std::optional<RpcStatus>& error() const { return error_; }            // FAILED, CANCELLED
  // When the runtime next looks at the job. nullopt: not until another writer moves it, and the
  // executor's lease goes with it.
  const std::optional<Timestamp>& next_action_at() const { return next_action_at_; }
  const std::optional<JobAdmission>& admission() const { return admission_; }  // on admission
  bool ends_admission() const { return ends_admission_; }      // the admission's cost is accrued
  bool clears_admission() const { return clears_admission_; }  // back in the queue: it goes
  // A RUNNING gang stopped before its end (preempted, a node failed, retried): it keeps the work
  // its checkpoints hold and the time since the last one is redone.
  bool interrupts_run() const { return interrupts_run_; }
  // An interrupted run whose progress was saved at this time (an emergency checkpoint in a
  // preemption notice): what it ran after is lost, nothing before; nullopt: its last periodic
  // checkpoint holds.
  const std::optional<Timestamp>& progress_saved_at() const { return progress_saved_at_; }
  bool spot_restart() const { return spot_restart_; }  // counts against the spot restarts
  const std::optional<SchedulingNote>& note() const { return note_; }
  bool requires_nodes_up() const { return requires_nodes_up_; }  // none of its nodes is down
  // RUNNING: cached on the job's nodes from now on.
  const std::optional<std::string>& image_uri() const { return image_uri_; }
  const std::optional<JobRun>& run() const { return run_; }  // the run as it is now
  bool stops_replicas() const { return stops_replicas_; }    // the next start launches anew

 private:
  friend class JobStateMachine;
  JobState from_ = JobState::kUnspecified;
  JobState to_ = JobState::kUnspecified;
  Timestamp at_{};
  std::string reason_;
  std::optional<JobPassage> via_;
  std::optional<Timestamp> start_time_;
  std::optional<Timestamp> end_time_;
  std::optional<RpcStatus> error_;
  std::optional<Timestamp> next_action_at_;
  std::optional<JobAdmission> admission_;
  bool ends_admission_ = false;
  bool clears_admission_ = false;
  bool interrupts_run_ = false;
  std::optional<Timestamp> progress_saved_at_;
  bool spot_restart_ = false;
  std::optional<SchedulingNote> note_;
  bool requires_nodes_up_ = false;
  std::optional<std::string> image_uri_;
  std::optional<JobRun> run_;
  bool stops_replicas_ = false;
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
  // its place (queue time is create time, unless the scheduler orders requeued jobs by their
  // eviction: SchedulerConfig::requeue_timestamp), its cost so far and its checkpointed work: up to
  // `progress_saved_at` when it wrote an emergency checkpoint in its notice.
  static StatusOr<JobTransition> Requeue(const JobSnapshot& job, Timestamp now, std::string message,
                                         bool spot_restart,
                                         std::optional<Timestamp> progress_saved_at = std::nullopt);
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
                                               std::string message,
                                               std::optional<JobRun> run = std::nullopt);
  // RUNNING … → CANCELLING: the runtime stops the job's replicas next.
  static StatusOr<JobTransition> Cancel(const JobSnapshot& job, Timestamp now);

  // `first` and then `second` (from the state `first` reaches, no earlier) as one transition that
  // passes through first's state: its events, stamps, goodput and the image its nodes cache are
  // both's, the rest `second`'s. Only a start and its end (first to RUNNING, second from it, first
  // with no admission or passage of its own); FAILED_PRECONDITION otherwise.
  static StatusOr<JobTransition> Through(JobTransition first, JobTransition second);

  // The runtime's side of a step (services/runtime/job_supervisor): the run as it now is and when
  // the runtime looks again.
  static JobTransition WithRun(JobTransition t, std::optional<JobRun> run,
                               std::optional<Timestamp> next_action_at);
  // A retry of the whole job (a replica failed): the replicas are gone, and a RUNNING gang keeps
  // only what its checkpoints hold.
  static JobTransition RetryingWholeJob(JobTransition t);
  // The reason the runtime gives the job (why its replicas wait, or that they are up).
  static JobTransition WithNote(JobTransition t, SchedulingNote note);
  // On RUNNING, the image the job's nodes cache from now on (other moves cache nothing).
  static JobTransition CachingImage(JobTransition t, std::optional<std::string> image_uri);

  // PENDING → PENDING: the last node it waited for is repaired; replicas restart at `resume_at`.
  static StatusOr<JobTransition> ResumeAfterRepair(const JobSnapshot& job, Timestamp now,
                                                   Timestamp resume_at, std::string message);
};

}  // namespace trainyard
