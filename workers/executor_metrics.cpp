#include "workers/executor_metrics.h"

#include <chrono>

namespace trainyard {

void ExecutorMetrics::Claimed(const ClaimCounts& counts) {
  claimed_.fetch_add(static_cast<uint64_t>(counts.claimed), std::memory_order_relaxed);
  expired_.fetch_add(static_cast<uint64_t>(counts.expired), std::memory_order_relaxed);
  taken_over_.fetch_add(static_cast<uint64_t>(counts.taken_over), std::memory_order_relaxed);
}

void ExecutorMetrics::Applied(JobState to) {
  const auto i = static_cast<size_t>(to);
  if (i < transitions_.size()) transitions_[i].fetch_add(1, std::memory_order_relaxed);
}

void ExecutorMetrics::Started(Timestamp created, Timestamp running) {
  startup_.Observe(std::chrono::duration<double>(running - created).count());
}

void ExecutorMetrics::Write(metrics::Exposition& e) const {
  e.Counter("trainyard_executor_leases_claimed_total",
            "Active jobs this process's executor claimed a lease on (not the ones this "
            "process's scheduler handed it with their admission).",
            metrics::Load(claimed_));
  e.Counter("trainyard_executor_leases_expired_total",
            "Of them, jobs whose previous lease had expired (its holder stopped heartbeating).",
            metrics::Load(expired_));
  e.Counter("trainyard_executor_leases_taken_over_total",
            "Of those, leases that another process had held.", metrics::Load(taken_over_));
  e.Family("trainyard_job_transitions_total", "counter",
           "Job state changes this process's executor committed, by the state entered.");
  for (const JobStateSpelling& s : kJobStateSpellings) {
    const uint64_t n = transitions_[static_cast<size_t>(s.state)].load(std::memory_order_relaxed);
    if (n > 0)
      e.Sample("trainyard_job_transitions_total", {{"state", s.name}}, static_cast<double>(n));
  }
  e.Counter("trainyard_executor_deferred_seconds_total",
            "Time the runtime's passes waited while the API's writes were busy.",
            deferred_.seconds());
  e.Counter("trainyard_job_replica_restarts_total",
            "Replicas restarted in place after they exited (restartJobOnWorkerRestart).",
            metrics::Load(restarts_));
  e.Family("trainyard_job_startup_seconds", "histogram",
           "From a job's creation to RUNNING, in the service's (virtual) time: queueing, booting, "
           "image pulls.");
  e.HistogramSamples("trainyard_job_startup_seconds", {}, startup_.Read());
}

}  // namespace trainyard
