#include "services/jobs/job_record_update.h"

#include <algorithm>

#include "services/cost/accrual.h"

namespace trainyard {

void ApplyToRecord(const JobTransition& t, JobRecord& record) {
  CustomJob& job = record.job;
  if (!job.trainyard) job.trainyard = SchedulingStatus{};
  SchedulingStatus& status = *job.trainyard;
  // Every rule reads the record as it was (as an UPDATE's SET expressions read the old row).
  const Timestamp since = record.state_since.value_or(job.update_time.value_or(t.at()));
  const Duration in_state = std::max(Duration{}, Duration(t.at() - since));
  const bool started = job.start_time.has_value();

  job.state = t.to();
  ++record.version;
  job.update_time = t.at();
  if (t.start_time()) job.start_time = t.start_time();
  if (t.end_time()) job.end_time = t.end_time();
  if (t.error()) job.error = t.error();
  record.next_action_at = t.next_action_at();
  if (t.ends_admission() && status.admitted_at) {
    record.cost_micros +=
        cost::AccruedMicros(record.hourly_price_micros, t.at() - *status.admitted_at);
  }
  if (t.from() != t.to()) {
    record.state_since = t.at();
    switch (GoodputClockOf(t.from())) {
      case GoodputClock::kQueued:
        (started ? status.goodput.restarting : status.goodput.waiting) += in_state;
        break;
      case GoodputClock::kPending:
        (started ? status.goodput.restarting : status.goodput.starting) += in_state;
        break;
      case GoodputClock::kRunning:
        status.goodput.running += in_state;
        break;
      case GoodputClock::kNone:
        break;
    }
    status.queue_position.reset();
  }
  if (t.from() != t.to() && GoodputClockOf(t.from()) == GoodputClock::kRunning) {
    // An emergency save in the notice keeps everything up to it: only the time since is redone.
    const Duration after_save =
        t.interrupts_run() && t.progress_saved_at()
            ? std::clamp<Duration>(t.at() - *t.progress_saved_at(), Duration{}, in_state)
            : Duration{};
    const RunSplit split = SplitRun(in_state - after_save, record.checkpointed > Duration{},
                                    record.checkpoint_interval, record.checkpoint_cost);
    status.goodput.checkpoint_restore += split.restore;
    status.goodput.checkpoint_save += split.saving;
    if (t.interrupts_run()) {
      const bool saved = t.progress_saved_at().has_value();
      status.goodput.redone += saved ? after_save : split.redone;
      record.checkpointed += saved ? split.kept + split.redone : split.kept;
    }
  }
  if (t.admission()) {
    status.admitted_at = t.at();
    status.zone = t.admission()->zone;
    status.pools = t.admission()->pools;
    status.startup = t.admission()->startup;
    status.startup_detail = t.admission()->startup_detail;
    record.hourly_price_micros = t.admission()->hourly_price_micros;
  } else if (t.clears_admission()) {
    status.admitted_at.reset();
    status.zone.clear();
    status.pools.clear();
    status.startup = Duration{};
    status.startup_detail = {};
    record.hourly_price_micros = 0;
  }
  if (t.spot_restart()) ++record.spot_restarts;
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
