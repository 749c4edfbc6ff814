#pragma once
// The job executor's figures for /metrics: the leases it claimed (not those its own process's
// scheduler handed it with an admission; and of them the expired ones,
// taken over from a process that stopped heartbeating), the transitions it applied by target state,
// replicas restarted in place, and how long jobs waited from creation to RUNNING (virtual time,
// what the job's createTime and startTime show). Written by the executor's thread, read by
// scrapes: relaxed atomics.
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>

#include "services/clock.h"
#include "services/jobs/job_repository.h"
#include "services/jobs/job_state_names.h"
#include "services/metrics/duration_counter.h"
#include "services/metrics/exposition.h"
#include "services/metrics/histogram.h"

namespace trainyard {

// Seconds from a job's creation to RUNNING: queueing, booting and image pulls.
inline constexpr std::array<double, 14> kStartupBuckets = {
    1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 21600, 86400};

class ExecutorMetrics {
 public:
  void Claimed(const ClaimCounts& counts);
  void Applied(JobState to);
  void Restarted(int replicas) { restarts_.fetch_add(replicas, std::memory_order_relaxed); }
  void Started(Timestamp created, Timestamp running);
  // How long a pass waited for the API's writes (workers/request_deferral.h).
  void Deferred(std::chrono::steady_clock::duration waited) { deferred_.Add(waited); }
  void Write(metrics::Exposition& e) const;

 private:
  std::atomic<uint64_t> claimed_{0};
  std::atomic<uint64_t> expired_{0};
  std::atomic<uint64_t> taken_over_{0};
  std::array<std::atomic<uint64_t>, kJobStateSpellings.size()> transitions_{};
  std::atomic<uint64_t> restarts_{0};
  metrics::Histogram startup_{kStartupBuckets};
  metrics::DurationCounter deferred_;
};

}  // namespace trainyard
