#pragma once
// Vertex's failure rules (docs/runtimes.md, "Failure rules"; JobSet's vocabulary where Vertex is
// silent), as one pure decision over a job, its stored run and what the runtime observes now. The
// same for every runtime; the executor carries the verdict out.
//
// - All replicas start together; the job is RUNNING only when every one is.
// - The primary (workerpool0-0) exiting 0 means SUCCEEDED, and the others are stopped.
// - A replica that exits non-zero restarts in place, up to 5 times in an attempt; then the whole
//   job is retried (every replica relaunched), up to 3 times. restartJobOnWorkerRestart restarts
//   every replica whenever one restarts. SIGABRT and SIGSEGV (exit 134/139) and a lost replica
//   are transient: the whole job is retried at once. disableRetries turns all of this off.
// - A job that finally fails is FAILED naming the replica and its exit code.
// - scheduling.timeout (7 days unset) bounds the time since the first start: DEADLINE_EXCEEDED.
// - Under a stop notice (a spot reclaim, a window's end, a preemption's grace) the replicas are
//   warned, and one that exits meanwhile is no failure: the stop that follows requeues the job.
#include <optional>
#include <string>
#include <vector>

#include "services/jobs/job_state_machine.h"
#include "services/runtime/runtime.h"

namespace trainyard {

struct SupervisorPolicy {
  int max_replica_restarts = 5;  // per replica, per attempt
  int max_job_retries = 3;
  Duration poll = std::chrono::seconds(1);  // look again when the runtime gives no next change
};

struct SupervisorVerdict {
  std::optional<JobTransition> transition;  // to apply (checked by JobStateMachine)
  std::vector<std::string> restart;         // replicas to restart in place before applying
  bool stop = false;                        // stop every replica (after applying)
  bool notice = false;  // the job's machines stop at a known time: warn its replicas now
  std::optional<Timestamp> look_again;  // no transition: when to look next
  // A start (PENDING → RUNNING) whose run the runtime says succeeds then, before any deadline:
  // the start may wait to be written with the end (JobTransition::via).
  std::optional<Timestamp> succeeds_at;
};

// What to do with a due `job` now. `observation` is nullopt when nothing is launched (a PENDING
// job whose replicas are to be launched, or any job whose runtime has nothing to observe).
SupervisorVerdict Supervise(const JobRecord& job, const std::optional<Observation>& observation,
                            Timestamp now, const SupervisorPolicy& policy = {});

// The job's reason while its runtime cannot be asked (a transition to the state it is in), or
// nullopt when its reason already says so: the job keeps its state, and users see why nothing
// moves.
std::optional<JobTransition> RuntimeUnavailable(const JobRecord& job, Timestamp now,
                                                const std::string& why);

// The first start plus scheduling.timeout, or on DWS flex-start capacity its admission plus the
// VMs' 7 days if sooner: when a started job is stopped as DEADLINE_EXCEEDED.
std::optional<Timestamp> RunDeadline(const CustomJob& job);

}  // namespace trainyard
