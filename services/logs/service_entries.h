#pragma once
// The service's own log entries, made from what is already durable instead of being written twice:
// each job event (a state change with its reason, written in the transaction of the transition)
// and the retention note. Pure: storage reads the rows, this says what they read as.
#include <cstdint>

#include "services/logs/log_entry.h"
#include "services/model/custom_job.h"

namespace trainyard {

// "Job state JOB_STATE_QUEUED -> JOB_STATE_PENDING: <reason>" ("Job state JOB_STATE_QUEUED:
// created" for the first), task "service". INFO, WARNING when
// the job goes back (preempted, requeued) or is cancelled, ERROR when it fails or expires.
LogEntry ServiceEventEntry(int64_t job_id, const InsertId& id, JobState from, JobState to,
                           const std::string& reason);

// "N lines dropped …" at the gap retention left, task "service", WARNING.
LogEntry DropNoticeEntry(int64_t job_id, const InsertId& id, int64_t dropped, int64_t head,
                         int64_t tail);

}  // namespace trainyard
