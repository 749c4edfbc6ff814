#pragma once
// What job logs need from storage: appending replica lines in batches (the runtime's writer calls
// it from its loop) and reading a job's entries in (time, insertId) order, replica lines merged
// with the service's entries (its job_events). storage/pg_job_log_store implements it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "services/logs/log_entry.h"
#include "services/status.h"

namespace trainyard {

// How many replica lines a job keeps. A chatty job cannot fill the database: once a job has
// appended more than lines_per_job, the first half (how it started: environment, configuration,
// the first errors) and the newest half stay, the lines between are deleted and counted, and the
// log says so with a service entry "N lines dropped …" where the gap is.
struct JobLogRetention {
  int64_t lines_per_job = 10000;
  int64_t head() const { return lines_per_job / 2; }
  int64_t tail() const { return lines_per_job - head(); }
};

struct LogQuery {
  int64_t job_id = 0;
  // The job must belong to this project (and to `location` when set); otherwise List is NOT_FOUND.
  int64_t project_number = 0;
  std::optional<std::string> location;
  std::optional<std::string> task_name;  // "service" selects the service's entries
  std::optional<Timestamp> from;         // time >= from
  std::optional<InsertId> after;         // position > after
  std::optional<Timestamp> until;        // time < until
  bool descending = false;
  int page_size = 100;                 // 1..kMaxLogPageSize
  std::optional<InsertId> page_after;  // resume after this entry, in the query's order
};

struct LogPage {
  std::vector<LogEntry> entries;
  std::optional<InsertId> next;  // set when more entries match: resume after it
};

class JobLogRepository {
 public:
  virtual ~JobLogRepository() = default;
  // Appends lines of one or many jobs in one transaction and one round trip, applying the
  // retention bound. Lines of a job that no longer exists (deleted meanwhile) are skipped, not an
  // error: a batch must not fail for one job's race with a delete. Messages are stored as given
  // after SanitizeLogMessage (valid UTF-8, no NUL, at most kMaxLogMessageBytes).
  virtual Status Append(const std::vector<LogLine>& lines) = 0;
  // One page of the job's entries; NOT_FOUND when the job does not exist under the query's
  // project (and location).
  virtual StatusOr<LogPage> List(const LogQuery& query) = 0;
};

}  // namespace trainyard
