#pragma once
// The runtime loop: holds leases on active jobs and, when a job's next action falls due, drives its
// replicas through the Runtime port (launch, observe, restart, stop) and applies what the
// supervisor (services/runtime/job_supervisor.h) decides as a job transition. Every pass is one
// short transaction; nothing stays open while a job runs. A process that dies stops heartbeating,
// its leases expire, and another executor claims the jobs: the row carries everything needed to
// continue (state, run with the replicas' handles, next_action_at, version).
//
// A start whose run the runtime knows succeeds within one idle tick (a simulated job shorter than
// the passes) is not written when seen: the pass that sees its end writes the start and the end in
// one transition (JobTransition::via), as a controller that reconciles to what it observes would.
// Nothing acknowledged depends on it, and a process that dies meanwhile loses nothing: the row
// still says PENDING without a run, and whoever holds the job next launches the attempt again,
// which adopts its replicas (Runtime::Launch is idempotent for an attempt).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "services/clock.h"
#include "services/jobs/job_repository.h"
#include "services/logs/job_log_repository.h"
#include "services/runtime/job_supervisor.h"
#include "services/runtime/runtime.h"
#include "workers/executor_metrics.h"
#include "workers/request_deferral.h"
#include "workers/runtime_backoff.h"

namespace trainyard {

struct JobExecutorOptions {
  std::string owner;  // unique per process: host:pid:random
  std::chrono::seconds lease{30};
  int batch = 500;
  // How long an idle pass waits before looking again: the latency of a step that falls due while
  // idle (virtual time runs --sim-speed times faster, so this must stay small).
  std::chrono::milliseconds idle_tick{20};
  SupervisorPolicy policy;
  // A job whose runtime did not answer waits this long before the next try, doubling up to
  // runtime_backoff_max (workers/runtime_backoff.h).
  std::chrono::milliseconds runtime_backoff{250};
  std::chrono::milliseconds runtime_backoff_max{10000};
  JobLogRepository* logs = nullptr;  // where the replicas' output goes (none: dropped)
  // Passes wait while the API's writes are busy (workers/request_deferral.h).
  RequestDeferral deferral;
};

class JobExecutor {
 public:
  JobExecutor(JobLeaseRepository& leases, JobRepository& jobs, Runtime& runtime, const Clock& clock,
              JobExecutorOptions options)
      : leases_(leases),
        jobs_(jobs),
        runtime_(runtime),
        clock_(clock),
        options_(std::move(options)),
        backoff_(options_.runtime_backoff, options_.runtime_backoff_max) {}
  ~JobExecutor() { Stop(); }

  // One pass: heartbeat, claim, then one step for every due job. Returns the transitions applied.
  // Tests call this directly with a manual clock; Start() calls it in a loop.
  StatusOr<int> RunOnce();

  void Start();
  // Stops the loop and gives the leases back so another process can continue at once.
  void Stop();
  // The jobs whose leases Stop() gave back: the ones whose replicas a stopping server ends.
  const std::vector<int64_t>& released() const { return released_; }
  const ExecutorMetrics& metrics() const { return metrics_; }

 private:
  struct Step {
    SupervisorVerdict verdict;
    const JobRecord* record = nullptr;
  };
  // A launched run not yet written (see above): the job's row version it was launched at.
  struct HeldStart {
    int64_t version = 0;
    JobRun run;
    Timestamp succeeds_at{};
  };
  std::optional<Step> StepJob(const JobRecord& record, Timestamp now);
  // Whether `step`, a start whose run succeeds within a tick, waits for its end (kept in held_).
  bool HoldsStart(const JobRecord& record, const Step& step, Timestamp now);
  void StopStrays();
  // Whether our leases are surely still ours: another executor may claim a job only once its lease
  // has expired in the database, which is no earlier than our last heartbeat's sending plus the
  // lease; we stop acting a quarter lease before that. Launches and restarts happen before the
  // commit that the lease fences, so a slow pass must not outlive the lease doing them.
  bool LeaseHeld() const;
  // When the leases this executor holds may pass to another: a quarter lease before they expire,
  // so a call that ends before then never acts beside the next holder.
  LeaseDeadline HeldUntil() const;
  // A runtime call outlasted the lease: nothing of it is written (logged).
  std::optional<Step> LeaseLost(const JobRecord& record, const char* call);
  void AppendLogs(Timestamp now);
  // The runtime failed to act on the job (`what`): it waits before its next step, and when the
  // runtime cannot be reached the job's reason says so (the step that writes it, if any).
  // `task`: the replica the failed call was about, if one.
  std::optional<Step> RuntimeFailed(const JobRecord& record, Timestamp now, const char* what,
                                    const Status& status, std::string_view task = {});
  void Loop();
  std::chrono::milliseconds IdleWait();

  JobLeaseRepository& leases_;
  JobRepository& jobs_;
  Runtime& runtime_;
  const Clock& clock_;
  JobExecutorOptions options_;
  std::optional<std::chrono::steady_clock::time_point> last_heartbeat_;
  std::vector<int64_t> released_;
  ExecutorMetrics metrics_;
  Timestamp last_pass_at_{};  // virtual time of the last pass's look at due steps
  RuntimeBackoff backoff_;
  std::unordered_map<int64_t, HeldStart> held_;       // this pass's held starts
  std::unordered_map<int64_t, HeldStart> last_held_;  // the last pass's
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable wake_;
};

std::string DefaultExecutorOwner();

}  // namespace trainyard
