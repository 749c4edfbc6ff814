#pragma once
// The customJobs use cases: create, get, list, cancel, delete. Validation and state rules live in
// the domain; the service orders them and talks to the repositories.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "services/clock.h"
#include "services/jobs/job_repository.h"
#include "services/jobs/resource_lookup.h"
#include "services/status.h"

namespace trainyard {

struct ListJobsRequest {
  ParentRef parent;
  std::optional<FilterExpr> filter;
  int page_size = 100;
  std::optional<JobCursor> after;
};

// A job as a poll shows it, without copying what the process keeps: the stored job, shared, and
// its scheduling status accrued to now (the one part of it that moves with the clock).
struct JobView {
  std::shared_ptr<const JobRecord> record;
  std::optional<SchedulingStatus> status;
  const CustomJob& job() const { return record->job; }
};

struct ListJobsResult {
  std::vector<CustomJob> jobs;
  std::optional<JobCursor> next;  // set when another page exists
};

class JobService {
 public:
  // `resources` (optional) checks jobs that name a persistent resource against it; `ids` (none:
  // random) numbers new jobs and operations.
  JobService(ProjectRepository& projects, JobRepository& jobs, const Clock& clock,
             ResourceLookup* resources = nullptr, IdSource* ids = nullptr)
      : projects_(projects),
        jobs_(jobs),
        clock_(clock),
        resources_(resources),
        ids_(ids != nullptr ? *ids : RandomIdSource()) {}

  StatusOr<CustomJob> Create(const ParentRef& parent, CustomJob job, const std::string& request_id);
  StatusOr<CustomJob> Get(const JobRef& ref);
  // Get's job, shared rather than copied (a poll's path).
  StatusOr<JobView> Read(const JobRef& ref);
  StatusOr<ListJobsResult> List(const ListJobsRequest& request);
  Status Cancel(const JobRef& ref);
  StatusOr<Operation> Delete(const JobRef& ref);

  // Called after each create commits (the composition root wakes the scheduler with it).
  void OnCreated(std::function<void()> created) { on_created_ = std::move(created); }

 private:
  // The job as the repository keeps it (shared), or NOT_FOUND naming the job as the caller did.
  StatusOr<std::shared_ptr<const JobRecord>> LoadShared(const JobRef& ref);
  StatusOr<JobRecord> Load(const JobRef& ref);
  Status CheckResource(const Project& project, const std::string& location,
                       const CustomJobSpec& spec);

  ProjectRepository& projects_;
  JobRepository& jobs_;
  const Clock& clock_;
  ResourceLookup* resources_ = nullptr;
  IdSource& ids_;
  std::function<void()> on_created_;
};

// The cost and goodput a job shows: what its earlier states accrued plus its current state's time
// so far (the admission's hourly price times its time; the current state's goodput bucket).
// Terminal jobs have accrued everything already.
void AccrueToNow(JobRecord& record, Timestamp now);

// The NOT_FOUND a client sees for a job that does not exist (or is not theirs).
Status JobNotFound(const JobRef& ref);

// The project number and job id `ref` names; the job's NOT_FOUND when the id is not a number or
// the project is unknown (whether the job exists is the caller's query).
struct JobKey {
  int64_t project_number = 0;
  int64_t id = 0;
};
StatusOr<JobKey> ResolveJobRef(ProjectRepository& projects, const JobRef& ref);

}  // namespace trainyard
