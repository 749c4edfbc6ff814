#include "services/logs/job_log_service.h"

#include <charconv>

#include "services/jobs/job_service.h"

namespace trainyard {
namespace {

// Job ids are positive 64-bit numbers; anything else names no job.
std::optional<int64_t> ParseJobId(const std::string& text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value <= 0) return std::nullopt;
  return value;
}

}  // namespace

StatusOr<JobLogsPage> JobLogService::ListJobLogs(const JobLogsRequest& request) {
  TY_ASSIGN_OR_RETURN(JobKey key, ResolveJobRef(projects_, request.job));
  LogQuery query;
  query.job_id = key.id;
  query.project_number = key.project_number;
  query.location = request.job.parent.location;
  query.task_name = request.task_name;
  query.after = request.after;
  query.page_size = request.page_size;
  query.page_after = request.page_after;
  auto page = logs_.List(query);
  if (!page.ok()) {
    if (page.status().code() == Code::kNotFound) return JobNotFound(request.job);
    return page.status();
  }
  TY_ASSIGN_OR_RETURN(Project project,
                      projects_.Resolve(request.job.parent.project, /*create_if_missing=*/false));
  return JobLogsPage{std::move(project), std::move(*page)};
}

StatusOr<JobLogsPage> JobLogService::ListEntries(const LogEntriesRequest& request) {
  const JobLogFilter& filter = request.filter;
  std::optional<int64_t> job_id = ParseJobId(filter.job_id);
  if (filter.matches_nothing || !job_id) return JobLogsPage{};
  LogQuery query;
  query.job_id = *job_id;
  query.task_name = filter.task_name;
  query.from = filter.from;
  query.after = filter.after;
  // Entries carry virtual time; gcloud's upper bound is its wall clock minus 5 s, meant to let
  // entries committed late land before the reader passes them. Read at the same wall instant on
  // our clock it keeps that meaning at any --sim-speed (and is the identity at speed 1).
  if (filter.until_wall) query.until = clock_.AtWallTime(*filter.until_wall);
  query.descending = request.descending;
  query.page_size = request.page_size;
  query.page_after = request.page_after;
  for (const std::string& name : request.projects) {
    auto project = projects_.Resolve(name, /*create_if_missing=*/false);
    if (!project.ok()) {
      if (project.status().code() == Code::kNotFound) continue;
      return project.status();
    }
    query.project_number = project->number;
    auto page = logs_.List(query);
    if (page.ok()) return JobLogsPage{std::move(*project), std::move(*page)};
    if (page.status().code() != Code::kNotFound) return page.status();
  }
  return JobLogsPage{};
}

}  // namespace trainyard
