#include "workers/scheduler_metrics.h"

namespace trainyard {

static_assert(static_cast<int>(PreemptionCause::kHigherPriority) == 0 &&
                  static_cast<int>(PreemptionCause::kReclaim) == 1 &&
                  static_cast<int>(PreemptionCause::kFairSharing) == 2,
              "the causes' names in Write follow the enum's order");

void SchedulerMetrics::Cycle(double ingest, double decide, std::optional<double> commit,
                             const CycleResult& cycle, const CommitOutcome& committed,
                             size_t pending, size_t running) {
  const int evaluations = cycle.evaluations;
  for (const AdmissionDecision& a : cycle.admissions) {
    for (int64_t victim : a.victims) {
      const auto cause = static_cast<size_t>(a.CauseOf(victim));
      if (cause < preempted_by_cause_.size()) {
        preempted_by_cause_[cause].fetch_add(1, std::memory_order_relaxed);
      }
    }
  }
  for (const VerdictUpdate& v : cycle.verdicts) {
    const auto code = static_cast<size_t>(v.verdict.code);
    if (v.code_changed && code < held_by_reason_.size()) {
      held_by_reason_[code].fetch_add(1, std::memory_order_relaxed);
    }
  }
  ingest_.Observe(ingest);
  decide_.Observe(decide);
  if (commit) commit_.Observe(*commit);
  cycles_.fetch_add(1, std::memory_order_relaxed);
  evaluations_.fetch_add(static_cast<uint64_t>(evaluations), std::memory_order_relaxed);
  admitted_.fetch_add(static_cast<uint64_t>(committed.admitted), std::memory_order_relaxed);
  preempted_.fetch_add(static_cast<uint64_t>(committed.preempted), std::memory_order_relaxed);
  failed_.fetch_add(static_cast<uint64_t>(committed.failed), std::memory_order_relaxed);
  skipped_.fetch_add(static_cast<uint64_t>(committed.skipped), std::memory_order_relaxed);
  verdicts_.fetch_add(static_cast<uint64_t>(committed.verdicts), std::memory_order_relaxed);
  pending_.store(pending, std::memory_order_relaxed);
  running_.store(running, std::memory_order_relaxed);
}

void SchedulerMetrics::Write(metrics::Exposition& e) const {
  e.Gauge("trainyard_scheduler_leader",
          "1 while this process holds the scheduler's leadership (one per database).",
          leading_.load(std::memory_order_relaxed) ? 1 : 0);
  e.Family("trainyard_scheduler_cycle_phase_seconds", "histogram",
           "Time of a leader pass's phases: ingest (job changes into the core), decide (the "
           "cycle), commit (one transaction).");
  e.HistogramSamples("trainyard_scheduler_cycle_phase_seconds", {{"phase", "ingest"}},
                     ingest_.Read());
  e.HistogramSamples("trainyard_scheduler_cycle_phase_seconds", {{"phase", "decide"}},
                     decide_.Read());
  e.HistogramSamples("trainyard_scheduler_cycle_phase_seconds", {{"phase", "commit"}},
                     commit_.Read());
  e.Counter("trainyard_scheduler_cycles_total", "Scheduling cycles this process ran as leader.",
            metrics::Load(cycles_));
  e.Counter("trainyard_scheduler_deferred_seconds_total",
            "Time the scheduler's passes waited while the API's writes were busy.",
            deferred_.seconds());
  e.Counter("trainyard_scheduler_evaluations_total",
            "Jobs the cycles judged afresh (reused verdicts of a shape not counted).",
            metrics::Load(evaluations_));
  e.Counter("trainyard_scheduler_admissions_total", "Jobs admitted onto capacity.",
            metrics::Load(admitted_));
  e.Counter("trainyard_scheduler_preemptions_total",
            "Running jobs stopped and requeued for an admission (priority, reclaim, fair sharing).",
            metrics::Load(preempted_));
  e.Counter("trainyard_scheduler_failures_total",
            "Jobs failed while queued (DWS maxWaitDuration, neverFitsTimeout).",
            metrics::Load(failed_));
  e.Counter("trainyard_scheduler_skipped_decisions_total",
            "Decisions dropped at commit because their job moved on since the cycle read it.",
            metrics::Load(skipped_));
  e.Counter("trainyard_scheduler_verdict_updates_total",
            "Queued jobs whose reason or position changed and was written.",
            metrics::Load(verdicts_));
  e.Gauge("trainyard_scheduler_pending_jobs",
          "Jobs waiting in the leader's core, parked ones included.", metrics::Load(pending_));
  e.Gauge("trainyard_scheduler_running_jobs",
          "Admitted jobs (and persistent-resource holds) in the leader's core.",
          metrics::Load(running_));
  e.Family("trainyard_scheduler_decisions_total", "counter",
           "What the cycles decided, by reason: preemptions by cause (HIGHER_PRIORITY, RECLAIM, "
           "FAIR_SHARING), and queued jobs newly held by the scheduler's reason code.");
  const char* causes[] = {"HIGHER_PRIORITY", "RECLAIM", "FAIR_SHARING"};
  for (size_t i = 0; i < preempted_by_cause_.size(); ++i) {
    e.Sample("trainyard_scheduler_decisions_total",
             {{"decision", "preempt"}, {"reason", causes[i]}},
             metrics::Load(preempted_by_cause_[i]));
  }
  for (size_t i = 0; i < held_by_reason_.size(); ++i) {
    const uint64_t n = held_by_reason_[i].load(std::memory_order_relaxed);
    if (n == 0) continue;
    e.Sample("trainyard_scheduler_decisions_total",
             {{"decision", "hold"}, {"reason", ReasonCodeName(static_cast<ReasonCode>(i))}},
             static_cast<double>(n));
  }
  e.Family("trainyard_fleet_events_total", "counter",
           "The simulated fleet's failures as the leader applied them: spot preemption notices, "
           "spot nodes reclaimed, node failures, repairs finished, injected faults.");
  const std::pair<const char*, const std::atomic<uint64_t>*> events[] = {
      {"spot_notice", &notices_},
      {"spot_reclaimed", &reclaimed_},
      {"node_failed", &node_failures_},
      {"node_repaired", &repairs_},
      {"injected", &injections_}};
  for (const auto& [event, n] : events) {
    e.Sample("trainyard_fleet_events_total", {{"event", event}}, metrics::Load(*n));
  }
}

void SchedulerMetrics::Fleet(const FailureStepStats& step) {
  notices_.fetch_add(static_cast<uint64_t>(step.notices), std::memory_order_relaxed);
  reclaimed_.fetch_add(static_cast<uint64_t>(step.reclaimed), std::memory_order_relaxed);
  node_failures_.fetch_add(static_cast<uint64_t>(step.failed), std::memory_order_relaxed);
  repairs_.fetch_add(static_cast<uint64_t>(step.repaired), std::memory_order_relaxed);
  injections_.fetch_add(static_cast<uint64_t>(step.injections), std::memory_order_relaxed);
}

}  // namespace trainyard
