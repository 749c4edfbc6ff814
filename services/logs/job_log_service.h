#pragma once
// Reading job logs: the curl route (a job named by its path; NOT_FOUND when it does not exist) and
// Cloud Logging's entries:list (a filter over a project; an unknown project or job matches nothing,
// as Cloud Logging never answers a filter with NOT_FOUND).
#include <optional>
#include <string>
#include <vector>

#include "services/clock.h"
#include "services/jobs/job_repository.h"
#include "services/logs/job_log_repository.h"

namespace trainyard {

// What a Cloud Logging filter says about a job's entries (api/logging_filter parses the text).
struct JobLogFilter {
  std::string job_id;                    // resource.labels.job_id, as the client wrote it
  std::optional<std::string> task_name;  // resource.labels.task_name or labels.task_name
  std::optional<Timestamp> from;         // timestamp >= (virtual time, from earlier entries)
  std::optional<InsertId> after;         // (timestamp="T" AND insertId>"I") OR timestamp>"T"
  std::optional<Timestamp> until_wall;   // timestamp < (gcloud's wall clock: now - 5 s)
  bool matches_nothing = false;          // e.g. resource.type other than ml_job
};

struct LogEntriesRequest {
  std::vector<std::string> projects;  // from resourceNames "projects/<id or number>"
  JobLogFilter filter;
  bool descending = false;
  int page_size = 50;  // Cloud Logging's default
  std::optional<InsertId> page_after;
};

struct JobLogsRequest {
  JobRef job;
  std::optional<std::string> task_name;
  std::optional<InsertId> after;
  int page_size = 100;
  std::optional<InsertId> page_after;
};

// A page with the project the job belongs to (entries name it in logName and labels).
struct JobLogsPage {
  Project project;
  LogPage page;
};

class JobLogService {
 public:
  JobLogService(JobLogRepository& logs, ProjectRepository& projects, const Clock& clock)
      : logs_(logs), projects_(projects), clock_(clock) {}

  // NOT_FOUND (the job's) when the job does not exist under that project and location.
  StatusOr<JobLogsPage> ListJobLogs(const JobLogsRequest& request);
  // An empty page when no listed project has the job.
  StatusOr<JobLogsPage> ListEntries(const LogEntriesRequest& request);

 private:
  JobLogRepository& logs_;
  ProjectRepository& projects_;
  const Clock& clock_;
};

}  // namespace trainyard
