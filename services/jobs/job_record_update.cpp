#include "services/jobs/job_record_update.h"

#include <algorithm>

#include "services/cost/accrual.h"

namespace trainyard {

JobTransitionBasis BasisOf(const JobRecord& record) {
  JobTransitionBasis basis;
  basis.version = record.version;
  basis.state_since = record.state_since;
  basis.update_time = record.job.update_time;
  basis.started = record.job.start_time.has_value();
  if (record.job.trainyard) {
    basis.admitted_at = record.job.trainyard->admitted_at;
    basis.goodput = record.job.trainyard->goodput;
    basis.program_startup = record.job.trainyard->program_startup;
  }
  basis.hourly_price_micros = record.hourly_price_micros;
  basis.cost_micros = record.cost_micros;
  basis.checkpointed = record.checkpointed;
  basis.checkpoint_interval = record.checkpoint_interval;
  basis.checkpoint_cost = record.checkpoint_cost;
  basis.spot_restarts = record.spot_restarts;
  return basis;
}

namespace {

// The job leaves `from` at `at`: its time there goes to the state's bucket (before the first start
// QUEUED is waiting and PENDING starting, after it both are restarting), a run that ends splits as
// SplitRun says (an emergency save in the notice keeps everything up to it: only the time since is
// redone), and the next state begins.
void Leave(JobTransitionWrite& w, const JobTransitionBasis& basis, bool started, JobState from,
           Timestamp at, bool interrupts_run, const std::optional<Timestamp>& progress_saved_at) {
  const Timestamp since = w.state_since.value_or(basis.update_time.value_or(at));
  const Duration in_state = std::max(Duration{}, Duration(at - since));
  w.state_since = at;
  JobGoodput& g = w.goodput;
  switch (GoodputClockOf(from)) {
    case GoodputClock::kQueued:
      (started ? g.restarting : g.waiting) += in_state;
      break;
    case GoodputClock::kPending:
      (started ? g.restarting : g.starting) += in_state;
      break;
    case GoodputClock::kRunning: {
      g.running += in_state;
      const Duration after_save =
          interrupts_run && progress_saved_at
              ? std::clamp<Duration>(at - *progress_saved_at, Duration{}, in_state)
              : Duration{};
      const RunSplit split =
          SplitRun(in_state - after_save, w.checkpointed > Duration{}, basis.checkpoint_interval,
                   basis.checkpoint_cost, basis.program_startup);
      g.program_startup += split.program_startup;
      g.checkpoint_restore += split.restore;
      g.checkpoint_save += split.saving;
      if (interrupts_run) {
        const bool saved = progress_saved_at.has_value();
        g.redone += saved ? after_save : split.redone;
        w.checkpointed += saved ? split.kept + split.redone : split.kept;
      }
      break;
    }
    case GoodputClock::kNone:
      break;
  }
}

}  // namespace

JobTransitionWrite WriteOf(const JobTransition& t, const JobTransitionBasis& basis) {
  JobTransitionWrite w{basis.cost_micros, basis.state_since, basis.goodput, basis.checkpointed,
                       basis.spot_restarts + (t.spot_restart() ? 1 : 0)};
  // Every rule reads the row as it was: the cost accrues on the old admission.
  if (t.ends_admission() && basis.admitted_at) {
    w.cost_micros += cost::AccruedMicros(basis.hourly_price_micros, t.at() - *basis.admitted_at);
  }
  if (t.via()) {  // two moves in one write, each as if written alone
    Leave(w, basis, basis.started, t.from(), t.via()->at, false, std::nullopt);
    const bool started = basis.started || t.via()->state == JobState::kRunning;
    Leave(w, basis, started, t.via()->state, t.at(), t.interrupts_run(), t.progress_saved_at());
    return w;
  }
  if (t.from() == t.to()) return w;  // the state goes on
  Leave(w, basis, basis.started, t.from(), t.at(), t.interrupts_run(), t.progress_saved_at());
  return w;
}

void ApplyToRecord(const JobTransition& t, JobRecord& record) {
  CustomJob& job = record.job;
  if (!job.trainyard) job.trainyard = SchedulingStatus{};
  SchedulingStatus& status = *job.trainyard;
  const JobTransitionWrite w = WriteOf(t, BasisOf(record));

  job.state = t.to();
  ++record.version;
  job.update_time = t.at();
  if (t.start_time()) job.start_time = t.start_time();
  if (t.end_time()) job.end_time = t.end_time();
  if (t.error()) job.error = t.error();
  record.next_action_at = t.next_action_at();
  record.cost_micros = w.cost_micros;
  record.state_since = w.state_since;
  status.goodput = w.goodput;
  record.checkpointed = w.checkpointed;
  if (t.from() != t.to()) status.queue_position.reset();
  if (t.admission()) {
    status.admitted_at = t.at();
    status.zone = t.admission()->zone;
    status.pools = t.admission()->pools;
    status.startup = t.admission()->startup;
    status.startup_detail = t.admission()->startup_detail;
    status.program_startup = t.admission()->program_startup;
    record.hourly_price_micros = t.admission()->hourly_price_micros;
  } else if (t.clears_admission()) {
    status.admitted_at.reset();
    status.zone.clear();
    status.pools.clear();
    status.startup = Duration{};
    status.startup_detail = {};
    status.program_startup = Duration{};
    record.hourly_price_micros = 0;
  }
  record.spot_restarts = w.spot_restarts;
  if (t.note()) {
    status.reason_code = t.note()->code;
    status.reason_message = t.note()->code.empty() ? "" : t.note()->message;
  }
  if (t.run()) record.attempt = t.run()->attempt;
  if (t.stops_replicas()) {
    record.run.reset();
  } else if (t.run() && !t.run()->replicas.empty()) {
    record.run = JobRun{record.attempt, t.run()->replicas};
  }
  if (record.run) record.run->attempt = record.attempt;
  // What a read shows beside the row's columns (storage/pg_job_store.cpp's DecodeJobRow).
  status.hourly_price_usd = cost::Usd(record.hourly_price_micros);
  status.cost_usd = cost::Usd(record.cost_micros);
  status.spot_restarts = record.spot_restarts;
  status.attempt = record.attempt;
  status.replicas = record.run ? record.run->replicas : std::vector<ReplicaRun>{};
}

}  // namespace trainyard
