#include "services/jobs/job_service.h"

#include <charconv>

#include "services/cost/accrual.h"
#include "services/jobs/custom_job_validator.h"
#include "services/jobs/job_state_machine.h"
#include "services/jobs/priority_label.h"
#include "services/jobs/resource_fit.h"
#include "services/jobs/workload_model.h"

namespace trainyard {
namespace {

constexpr int kMaxIdRetries = 3;
constexpr int kMaxCasRetries = 5;

std::optional<int64_t> ParseId(const std::string& text) {
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value <= 0) return std::nullopt;
  return value;
}

}  // namespace

Status JobNotFound(const JobRef& ref) {
  return NotFound("CustomJob projects/" + ref.parent.project + "/locations/" + ref.parent.location +
                  "/customJobs/" + ref.job_id + " not found.");
}

StatusOr<JobKey> ResolveJobRef(ProjectRepository& projects, const JobRef& ref) {
  std::optional<int64_t> id = ParseId(ref.job_id);
  if (!id) return JobNotFound(ref);
  auto project = projects.Resolve(ref.parent.project, /*create_if_missing=*/false);
  if (!project.ok()) {
    if (project.status().code() == Code::kNotFound) return JobNotFound(ref);
    return project.status();
  }
  return JobKey{project->number, *id};
}

// The cost and goodput stored at the job's last change, plus what accrued since, as of `now`.
void Accrue(const JobRecord& record, Timestamp now, SchedulingStatus& s) {
  if (record.state_since) {
    s.goodput = GoodputAsOf(s.goodput, record.job.state, record.job.start_time.has_value(),
                            *record.state_since, now);
  }
  if (!s.admitted_at || IsTerminal(record.job.state)) return;
  s.cost_usd += cost::RunningUsd(s.hourly_price_usd, *s.admitted_at, now);
}

void AccrueToNow(JobRecord& record, Timestamp now) {
  if (record.job.trainyard) Accrue(record, now, *record.job.trainyard);
}

Status JobService::CheckResource(const Project& project, const std::string& location,
                                 const CustomJobSpec& spec) {
  if (spec.persistent_resource_id.empty() || resources_ == nullptr) return Status::Ok();
  auto resource = resources_->LookupResource(project.number, location, spec.persistent_resource_id);
  if (!resource.ok()) {
    if (resource.status().code() != Code::kNotFound) return resource.status();
    return InvalidField("jobSpec.persistentResourceId",
                        "persistent resource \"" + spec.persistent_resource_id +
                            "\" does not exist in projects/" + project.id + "/locations/" +
                            location + " (a job runs only on its own project's resources)");
  }
  const ResourceState state = resource->state;
  if (state == ResourceState::kStopping || state == ResourceState::kError) {
    return FailedPrecondition("persistent resource " + spec.persistent_resource_id + " is " +
                              (state == ResourceState::kError ? "in ERROR" : "being deleted") +
                              "; it takes no new jobs");
  }
  return CheckJobFitsResource(spec, *resource);
}

StatusOr<CustomJob> JobService::Create(const ParentRef& parent, CustomJob job,
                                       const std::string& request_id) {
  TY_RETURN_IF_ERROR(ValidateLocation(parent.location));
  TY_RETURN_IF_ERROR(ValidateCustomJob(job));
  TY_RETURN_IF_ERROR(ParsePriorityLabel(job.labels).status());
  job.trainyard.reset();
  TY_ASSIGN_OR_RETURN(Project project,
                      projects_.Resolve(parent.project, /*create_if_missing=*/true));
  TY_RETURN_IF_ERROR(CheckResource(project, parent.location, job.job_spec));

  Timestamp now = clock_.Now();
  JobRecord record;
  record.project_number = project.number;
  record.location = parent.location;
  record.job = std::move(job);
  record.job.state = JobState::kQueued;
  record.job.create_time = now;
  record.job.update_time = now;
  record.job.error.reset();
  record.job.start_time.reset();
  record.job.end_time.reset();
  record.job.web_access_uris.clear();
  TY_ASSIGN_OR_RETURN(record.checkpoint_interval, CheckpointInterval(record.job.job_spec));
  TY_RETURN_IF_ERROR(EmergencyCheckpointTime(record.job.job_spec).status());
  TY_ASSIGN_OR_RETURN(record.checkpoint_cost, CheckpointCosts(record.job.job_spec));
  // QUEUED belongs to the scheduler, which follows new rows by their change feed; the runtime looks
  // at the job once it is admitted.
  record.next_action_at.reset();

  for (int attempt = 0;; ++attempt) {
    record.id = ids_.Next();
    record.job.name = JobName(project.number, parent.location, record.id);
    Status inserted = jobs_.Insert(record, request_id);
    if (inserted.ok()) {
      if (on_created_) on_created_();
      return record.job;
    }
    if (inserted.code() != Code::kAlreadyExists || attempt + 1 >= kMaxIdRetries) return inserted;
  }
}

StatusOr<std::shared_ptr<const JobRecord>> JobService::LoadShared(const JobRef& ref) {
  TY_ASSIGN_OR_RETURN(JobKey key, ResolveJobRef(projects_, ref));
  auto record = jobs_.GetShared(key.project_number, ref.parent.location, key.id);
  if (!record.ok() && record.status().code() == Code::kNotFound) return JobNotFound(ref);
  return record;
}

StatusOr<JobRecord> JobService::Load(const JobRef& ref) {
  TY_ASSIGN_OR_RETURN(std::shared_ptr<const JobRecord> record, LoadShared(ref));
  return *record;
}

StatusOr<CustomJob> JobService::Get(const JobRef& ref) {
  TY_ASSIGN_OR_RETURN(JobRecord record, Load(ref));
  AccrueToNow(record, clock_.Now());
  return std::move(record.job);
}

StatusOr<JobView> JobService::Read(const JobRef& ref) {
  TY_ASSIGN_OR_RETURN(std::shared_ptr<const JobRecord> record, LoadShared(ref));
  JobView view{std::move(record), std::nullopt};
  if (view.record->job.trainyard) {
    view.status = *view.record->job.trainyard;
    Accrue(*view.record, clock_.Now(), *view.status);
  }
  return view;
}

StatusOr<ListJobsResult> JobService::List(const ListJobsRequest& request) {
  TY_RETURN_IF_ERROR(ValidateLocation(request.parent.location));
  ListJobsResult result;
  auto project = projects_.Resolve(request.parent.project, /*create_if_missing=*/false);
  if (!project.ok()) {
    // A project that never created anything simply has no jobs.
    if (project.status().code() == Code::kNotFound) return result;
    return project.status();
  }
  ListJobsQuery query;
  query.project_number = project->number;
  query.location = request.parent.location;
  query.filter = request.filter;
  query.limit = request.page_size;
  query.after = request.after;
  TY_ASSIGN_OR_RETURN(std::vector<JobRecord> rows, jobs_.List(query));
  if (static_cast<int>(rows.size()) > request.page_size) {
    rows.resize(request.page_size);
    result.next = JobCursor{*rows.back().job.create_time, rows.back().id};
  }
  result.jobs.reserve(rows.size());
  Timestamp now = clock_.Now();
  for (auto& row : rows) {
    AccrueToNow(row, now);
    result.jobs.push_back(std::move(row.job));
  }
  return result;
}

Status JobService::Cancel(const JobRef& ref) {
  // Compare-and-set against the runtime, which may move the job between our read and our write.
  for (int attempt = 0; attempt < kMaxCasRetries; ++attempt) {
    TY_ASSIGN_OR_RETURN(JobRecord record, Load(ref));
    if (record.job.state == JobState::kCancelling) return Status::Ok();
    if (IsTerminal(record.job.state)) {
      return FailedPrecondition("Cannot cancel CustomJob " + record.job.name +
                                " because it is already in a terminal state.");
    }
    Timestamp now = clock_.Now();
    TY_ASSIGN_OR_RETURN(
        JobTransition transition,
        JobStateMachine::Cancel(SnapshotOf(record.id, record.version, record.job), now));
    StateUpdate update;
    update.id = record.id;
    update.expected_version = record.version;
    update.transition = std::move(transition);
    TY_ASSIGN_OR_RETURN(bool applied, jobs_.ApplyTransition(update));
    if (applied) return Status::Ok();
  }
  return Aborted("the job changed concurrently; retry the cancel");
}

StatusOr<Operation> JobService::Delete(const JobRef& ref) {
  TY_ASSIGN_OR_RETURN(JobRecord record, Load(ref));
  if (!IsTerminal(record.job.state)) {
    return FailedPrecondition("CustomJob " + record.job.name +
                              " is not in a terminal state; cancel it before deleting it.");
  }
  Timestamp now = clock_.Now();
  Operation op;
  op.project_number = record.project_number;
  op.location = record.location;
  op.metadata_type = kDeleteOperationMetadata;
  op.done = true;  // the row goes in the same transaction, so the operation is born finished
  op.response_json = kEmptyResponseJson;
  op.create_time = now;
  op.update_time = now;
  for (int attempt = 0;; ++attempt) {
    op.id = ids_.Next();
    Status deleted = jobs_.DeleteWithOperation(record.project_number, record.location, record.id,
                                               record.version, op);
    if (deleted.ok()) return op;
    if (deleted.code() == Code::kNotFound) return JobNotFound(ref);
    if (deleted.code() != Code::kAlreadyExists || attempt + 1 >= kMaxIdRetries) return deleted;
  }
}

}  // namespace trainyard
