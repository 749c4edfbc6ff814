#include "services/logs/service_entries.h"

#include <string>

#include "services/jobs/job_state_names.h"

namespace trainyard {
namespace {

bool IsActive(JobState s) {
  return s == JobState::kPending || s == JobState::kRunning || s == JobState::kCancelling;
}

LogSeverity SeverityOf(JobState from, JobState to) {
  switch (to) {
    case JobState::kFailed:
    case JobState::kExpired:
      return LogSeverity::kError;
    case JobState::kCancelled:
    case JobState::kPartiallySucceeded:
      return LogSeverity::kWarning;
    case JobState::kQueued:
    case JobState::kPending:
      // Back from further along: a preemption, a node failure, a restart.
      return IsActive(from) ? LogSeverity::kWarning : LogSeverity::kInfo;
    default:
      return LogSeverity::kInfo;
  }
}

}  // namespace

LogEntry ServiceEventEntry(int64_t job_id, const InsertId& id, JobState from, JobState to,
                           const std::string& reason) {
  LogEntry e;
  e.job_id = job_id;
  e.time = id.time;
  e.insert_id = id;
  e.severity = SeverityOf(from, to);
  e.task_name = std::string(kServiceTask);
  // A job is born in its first state: no "from" to show.
  e.message = from == JobState::kUnspecified
                  ? "Job state " + std::string(StateNameForMessage(to))
                  : "Job state " + std::string(StateNameForMessage(from)) + " -> " +
                        std::string(StateNameForMessage(to));
  if (!reason.empty()) e.message += ": " + reason;
  return e;
}

LogEntry DropNoticeEntry(int64_t job_id, const InsertId& id, int64_t dropped, int64_t head,
                         int64_t tail) {
  LogEntry e;
  e.job_id = job_id;
  e.time = id.time;
  e.insert_id = id;
  e.severity = LogSeverity::kWarning;
  e.task_name = std::string(kServiceTask);
  e.message = std::to_string(dropped) + " lines dropped: this job keeps its first " +
              std::to_string(head) + " and its newest " + std::to_string(tail) +
              " replica lines (serve --log-lines-per-job)";
  return e;
}

}  // namespace trainyard
