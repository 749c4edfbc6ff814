#pragma once
// The Runtime port: what the executor needs from whatever runs a job's replicas (the simulator,
// processes of this host, a Slurm cluster). It launches a job's replicas on their placement with
// their environment (services/runtime/replica_plan.h), observes each replica, restarts one, and
// stops them all. What to do about an observation (Vertex's failure rules) is not the runtime's
// business: services/runtime/job_supervisor.h decides it, the same way for every runtime.
//
// Runtimes keep no state that matters only in memory: what a launch returns (JobRun, with a
// handle per replica) is stored in the job's row, so another executor that takes the job over, or
// this one after a restart, observes the same replicas.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "services/jobs/job_repository.h"
#include "services/logs/log_entry.h"
#include "services/model/job_run.h"
#include "services/status.h"

namespace trainyard {

struct ReplicaObservation {
  std::string task_name;
  ReplicaPhase phase = ReplicaPhase::kPending;
  std::optional<int> exit_code;  // kExited: the process's status, or 128 + signal when killed
  std::string handle;            // the runtime's reference to the replica, as stored
  // When it started running, where the runtime knows better than the time it was observed (the
  // simulator knows exactly): the job is RUNNING from the moment its last replica started.
  std::optional<Timestamp> running_since;
};

// Reason codes a runtime gives a job (trainyard.reasonCode), beside the scheduler's.
inline constexpr std::string_view kRuntimeWaiting = "RUNTIME_WAITING";  // launched, not started
inline constexpr std::string_view kRuntimeUnavailable = "RUNTIME_UNAVAILABLE";  // cannot be asked

struct Observation {
  std::vector<ReplicaObservation> replicas;  // in the order of JobRun::replicas
  // Why launched replicas have not started, in the runtime's words, when it knows better than
  // "waiting for every one to start" (Slurm: the job's pending reason). Shown as the job's reason
  // (kRuntimeWaiting) while the job is PENDING.
  std::string waiting;
  // When something may change next without anyone asking: the simulator knows exactly (a run's
  // end); real runtimes give their poll interval.
  std::optional<Timestamp> next_change;
  // When the run will have succeeded, where the runtime knows in advance (the simulator): a start
  // that short-lived may be written together with its end (workers/job_executor.h).
  std::optional<Timestamp> succeeds_at;
};

// Until when (wall time) the executor surely holds its lease on the job a call is for.
using LeaseDeadline = std::chrono::steady_clock::time_point;
inline constexpr LeaseDeadline kNoLeaseDeadline = LeaseDeadline::max();

// Whose replicas a runtime holds: a job and one of its attempts.
struct ReplicaOwner {
  int64_t job_id = 0;
  int attempt = 0;
  auto operator<=>(const ReplicaOwner&) const = default;
};

class Runtime {
 public:
  virtual ~Runtime() = default;
  virtual std::string_view name() const = 0;

  // Starts every replica of `job` for `attempt` at `now`. Idempotent for the attempt: replicas it
  // already started (found by their handles or on the host) are not started twice. Nothing is
  // started that could outlive `lease_deadline` (wall time), when the executor's lease on the job
  // may have passed to another: UNAVAILABLE instead, and whoever holds the job then adopts what
  // was started.
  virtual StatusOr<JobRun> Launch(const JobRecord& job, int attempt, Timestamp now,
                                  LeaseDeadline lease_deadline) = 0;
  // Every replica of the job's current run (job.run).
  virtual StatusOr<Observation> Observe(const JobRecord& job, Timestamp now) = 0;
  // Restarts one replica in place; returns its new handle.
  virtual StatusOr<std::string> RestartReplica(const JobRecord& job, const ReplicaRun& replica,
                                               Timestamp now, LeaseDeadline lease_deadline) = 0;
  // Stops every replica of the job (gracefully, then forcibly); idempotent, and a job it has no
  // replicas of is already stopped.
  virtual Status Stop(const JobRecord& job) = 0;
  // The job's machines stop at a known time (services/model/stop_notice.h): a runtime of real
  // processes warns them now (SIGTERM), as a VM's shutdown script would, and Stop ends them once
  // the notice runs out. Idempotent; the others have nothing to warn.
  virtual Status Notice(const JobRecord& job) {
    (void)job;
    return Status::Ok();
  }
  // Jobs this runtime still has replicas of (running or not yet reaped), one entry per attempt, so
  // the executor can stop the ones whose job has moved on (requeued, retried, finished, deleted)
  // without a lease on them.
  virtual std::vector<ReplicaOwner> JobsWithReplicas() = 0;
  // Stops the job's replicas of every attempt but `keep` (a whole-job retry whose old replicas
  // outlived a crash); the same idempotence as Stop.
  virtual Status StopOtherAttempts(int64_t job_id, int keep) = 0;

  // A transition of the job was applied (the runtime may write what it means to the job's log).
  virtual void Applied(const JobRecord& job, const JobTransition& transition) = 0;
  // What the replicas printed since the lines last stored, as log lines of their jobs. Until
  // LogsStored says they are committed, the next call returns them again (with what came since),
  // so a failed append loses nothing.
  virtual std::vector<LogLine> CollectLogs(Timestamp now) = 0;
  // The lines of the last CollectLogs are committed: the runtime may forget them.
  virtual void LogsStored() = 0;
  // The server is stopping and gave back the leases of `jobs`: the runtime ends what it runs for
  // them on this host (within its grace), or leaves them where another server adopts them.
  virtual void Shutdown(const std::vector<int64_t>& jobs) = 0;
};

}  // namespace trainyard
