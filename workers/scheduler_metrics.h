#pragma once
// The scheduler leader's figures for /metrics: cycles and their phases, what they decided, the
// core's queue sizes, and whether this process leads. Written by the loop's one thread, read by
// scrapes: relaxed atomics, no lock.
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>

#include "services/metrics/duration_counter.h"
#include "services/metrics/exposition.h"
#include "services/metrics/histogram.h"
#include "services/scheduler/scheduler.h"
#include "services/scheduler/scheduler_store.h"
#include "workers/failure_simulator.h"

namespace trainyard {

class SchedulerMetrics {
 public:
  void Leading(bool leading) { leading_.store(leading, std::memory_order_relaxed); }
  // One pass that ran a cycle: its phases in seconds (no commit: nothing to write), what it
  // decided and what of that was committed.
  void Cycle(double ingest, double decide, std::optional<double> commit, const CycleResult& cycle,
             const CommitOutcome& committed, size_t pending, size_t running);
  // What one pass of the failure simulator did.
  void Fleet(const FailureStepStats& step);
  // How long a pass waited for the API's writes (workers/request_deferral.h).
  void Deferred(std::chrono::steady_clock::duration waited) { deferred_.Add(waited); }
  void Write(metrics::Exposition& e) const;

 private:
  std::atomic<bool> leading_{false};
  metrics::Histogram ingest_{metrics::kLatencyBuckets};
  metrics::Histogram decide_{metrics::kLatencyBuckets};
  metrics::Histogram commit_{metrics::kLatencyBuckets};
  std::atomic<uint64_t> cycles_{0};
  std::atomic<uint64_t> evaluations_{0};
  std::atomic<uint64_t> admitted_{0};
  std::atomic<uint64_t> preempted_{0};
  std::atomic<uint64_t> failed_{0};
  std::atomic<uint64_t> skipped_{0};
  std::atomic<uint64_t> verdicts_{0};
  std::atomic<uint64_t> pending_{0};
  std::atomic<uint64_t> running_{0};
  // Decisions by reason: preemptions by cause, jobs newly held by reason code.
  std::array<std::atomic<uint64_t>, 3> preempted_by_cause_{};
  std::array<std::atomic<uint64_t>, 16> held_by_reason_{};
  std::atomic<uint64_t> notices_{0};
  std::atomic<uint64_t> reclaimed_{0};
  std::atomic<uint64_t> node_failures_{0};
  std::atomic<uint64_t> repairs_{0};
  std::atomic<uint64_t> injections_{0};
  metrics::DurationCounter deferred_;
};

}  // namespace trainyard
