#pragma once
// The scheduler's leader loop: follows job changes into the core's long-lived state, runs a cycle,
// commits its decisions in one transaction. One process leads (advisory lock); the others wait.
// A failed commit drops the state and reloads it, so the core never runs on a state the database
// does not have.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "services/clock.h"
#include "services/fleet/external_capacity.h"
#include "services/scheduler/scheduler.h"
#include "services/scheduler/scheduler_store.h"
#include "workers/failure_simulator.h"
#include "workers/request_deferral.h"
#include "workers/resource_reconciler.h"
#include "workers/scheduler_metrics.h"

namespace trainyard {

struct SchedulerLoopOptions {
  std::chrono::milliseconds tick{200};
  // A woken loop (a job was created) runs its next pass at once, but passes start at least this
  // far apart, so a burst of creates costs a pass per gap, not one per create.
  std::chrono::milliseconds wake_gap{25};
  int change_batch = 10000;
  // Queue positions are reported at most this often in wall time (0: every pass). One admission
  // moves every job behind it, and each moved position is a row written and a poll cache
  // invalidated; Kueue reported positions in workload status every 5 s
  // (queueVisibility.updateIntervalSeconds). A job's verdict is reported at once either way.
  std::chrono::milliseconds positions_period{0};
  // …and, after a walk that rewrote many, later by this much per position written: a deep queue's
  // walk rewrites nearly every row behind an admission (40,000 took a second of PostgreSQL), so
  // its next waits ten times what each write cost (~25 µs), and positions take at most about a
  // tenth of the database's time.
  std::chrono::microseconds positions_period_per_write{250};
  // false: no pass walks the queues for positions (a replay, where no client reads them and a walk
  // per admission made its cost grow with the queue's depth). Verdicts are reported as with it.
  bool report_positions = true;
  // Passes wait while the API's writes are busy (workers/request_deferral.h).
  RequestDeferral deferral;
  SchedulerConfig config;
  // Admitted work waits out the fleet's simulated boot and image pull (services/scheduler/
  // admission_planner.h).
  bool simulated_startup = true;
  // This process's runtime, when it runs one: an admission hands it the job's lease in the
  // admission's own write, instead of the runtime rewriting the row to claim it.
  std::optional<LeaseGrant> runtime_lease;
};

struct LoopStats {
  bool leading = false;
  int reloaded = 0;  // jobs read to start the core again (a first pass, or after a skip)
  int changes = 0;
  CommitOutcome committed;
  int evaluations = 0;
};

class SchedulerLoop {
 public:
  SchedulerLoop(SchedulerStore& store, const Fleet& fleet, const Clock& clock,
                SchedulerLoopOptions options = {});
  ~SchedulerLoop() { Stop(); }

  // One pass: lead, ingest, cycle, commit. Tests call this with a manual clock.
  StatusOr<LoopStats> RunOnce();
  void Start();
  void Stop();
  // Something for the scheduler arrived (a job was created in this process): when no job was left
  // waiting by the last pass, run the next pass now rather than a tick later, so admission does
  // not wait out polling (at --sim-speed 50 a 200 ms tick is 10 s of model time).
  void Wake();

  const Scheduler& core() const { return core_; }
  const SchedulerMetrics& metrics() const { return metrics_; }
  // The fleet's failures run in the leader's pass, before the cycle sees the jobs they requeue.
  void SetFailureSimulator(FailureSimulator* failures) { failures_ = failures; }
  // So does the work on persistent resources (boot, reboot, delete), after their holds are read.
  void SetResourceReconciler(ResourceReconciler* resources) { resources_ = resources; }
  // A real cluster's word on its nodes (the Slurm runtime): its units down count too.
  void SetExternalCapacity(const ExternalCapacity* capacity) { external_ = capacity; }

 private:
  Status Ingest(LoopStats& stats);
  // Fails only for a job past the queue whose shape this loop never kept: a reload reads it whole.
  Status Apply(const JobRecord& record);
  // A persistent resource's hold: pending until placed, then held with its capacity for the
  // jobs that name it.
  void ApplyResource(const ResourceRecord& record);
  Status IngestResources(Timestamp now);
  void Loop();

  SchedulerStore& store_;
  const Fleet& fleet_;
  const Clock& clock_;
  SchedulerLoopOptions options_;
  Scheduler core_;
  AdmissionPlanner planner_;
  FailureSimulator* failures_ = nullptr;
  ResourceReconciler* resources_ = nullptr;
  const ExternalCapacity* external_ = nullptr;
  struct KnownResource {
    int64_t version = 0;
    std::string key;
  };
  std::unordered_map<int64_t, KnownResource> known_resources_;  // uid → as last applied
  // The persistent resources as last read: a pass reads a whole row again only when its stamp
  // (version, a cancel asked of its operation) moved.
  std::unordered_map<int64_t, ResourceRecord> resource_rows_;
  StatusOr<std::vector<ResourceRecord>> ReadResources();
  static SchedulerStore::ResourceStamp StampOf(const ResourceRecord& r) {
    return {r.uid, r.version, r.cancel_requested};
  }
  ChangeCursor cursor_;  // the job change feed, read exactly once (SchedulerStore::JobChanges)
  // Each live job's shape, made from its spec when its row was read QUEUED: the feed leaves the
  // spec out of the rows past the queue, and those are placed with this (a spec never changes).
  std::unordered_map<int64_t, SchedulerJob> shapes_;
  bool synced_ = false;
  bool was_leading_ = false;  // for the log line a takeover writes
  SchedulerMetrics metrics_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable wake_;
  bool woken_ = false;  // under mu_: a Wake came since the last pass began
  // When positions may next be walked (a walk reports those of every queue that moved).
  std::chrono::steady_clock::time_point positions_due_{};
  std::atomic<bool> queue_was_empty_{true};  // after the last pass: nobody waited for capacity
};

}  // namespace trainyard
