#include "storage/memory/memory_job_store.h"

#include <algorithm>

#include "services/jobs/priority_label.h"

namespace trainyard::storage::memory {

StatusOr<Project> MemoryProjectRepository::Resolve(const std::string& id_or_number,
                                                   bool create_if_missing) {
  TY_ASSIGN_OR_RETURN(const bool numeric, IsProjectNumber(id_or_number));
  std::lock_guard lock(db_.mu);
  if (numeric) {
    auto it = db_.projects_by_number.find(std::stoll(id_or_number));
    if (it == db_.projects_by_number.end()) {
      return NotFound("project " + id_or_number + " not found");
    }
    return it->second;
  }
  auto it = db_.projects_by_id.find(id_or_number);
  if (it != db_.projects_by_id.end()) return it->second;
  if (!create_if_missing) return NotFound("project " + id_or_number + " not found");
  Project project{db_.next_project_number++, id_or_number};
  db_.projects_by_id[project.id] = project;
  db_.projects_by_number[project.number] = project;
  return project;
}

StatusOr<std::vector<Project>> MemoryProjectRepository::List(int limit) {
  std::lock_guard lock(db_.mu);
  std::vector<Project> out;
  for (const auto& [id, project] : db_.projects_by_id) {
    if (static_cast<int>(out.size()) >= limit) break;
    out.push_back(project);
  }
  return out;
}

Status MemoryJobStore::Insert(const JobRecord& record, const std::string&) {
  std::lock_guard lock(db_.mu);
  if (db_.FindJobLocked(record.id) != nullptr) return AlreadyExists("job id taken");
  JobRecord stored = record;
  if (auto it = db_.projects_by_number.find(record.project_number);
      it != db_.projects_by_number.end()) {
    stored.project_id = it->second.id;
  }
  stored.state_since = record.job.create_time;
  if (!stored.job.trainyard) stored.job.trainyard = SchedulingStatus{};
  // The priority a job shows is its label's from the start, as a read on PostgreSQL gives it.
  if (auto priority = ParsePriorityLabel(stored.job.labels); priority.ok()) {
    stored.job.trainyard->priority = *priority;
  }
  db_.InsertLocked(std::move(stored));
  return Status::Ok();
}

StatusOr<JobRecord> MemoryJobStore::Get(int64_t project_number, const std::string& location,
                                        int64_t id) {
  std::lock_guard lock(db_.mu);
  const MemoryJob* job = db_.FindJobLocked(id);
  if (job == nullptr || job->record.project_number != project_number ||
      job->record.location != location) {
    return NotFound("custom job not found");
  }
  return job->record;
}

StatusOr<std::vector<JobRecord>> MemoryJobStore::List(const ListJobsQuery& query) {
  if (query.filter) return Unimplemented("list filters are not evaluated on jobs in memory");
  std::lock_guard lock(db_.mu);
  std::vector<const JobRecord*> matching;
  for (const auto& [id, job] : db_.JobsLocked()) {
    const JobRecord& r = job.record;
    if (r.project_number != query.project_number || r.location != query.location) continue;
    if (query.after) {
      const auto key = std::make_pair(*r.job.create_time, r.id);
      if (key >= std::make_pair(query.after->create_time, query.after->id)) continue;
    }
    matching.push_back(&r);
  }
  std::sort(matching.begin(), matching.end(), [](const JobRecord* a, const JobRecord* b) {
    return std::make_pair(*a->job.create_time, a->id) > std::make_pair(*b->job.create_time, b->id);
  });
  std::vector<JobRecord> out;
  for (size_t i = 0; i < matching.size() && i <= static_cast<size_t>(query.limit); ++i) {
    out.push_back(*matching[i]);
  }
  return out;
}

StatusOr<bool> MemoryJobStore::ApplyTransition(const StateUpdate& update) {
  std::lock_guard lock(db_.mu);
  return db_.ApplyLocked(update);
}

StatusOr<std::vector<bool>> MemoryJobStore::ApplyTransitions(
    const std::vector<StateUpdate>& updates) {
  std::lock_guard lock(db_.mu);
  std::vector<bool> out;
  out.reserve(updates.size());
  for (const StateUpdate& update : updates) out.push_back(db_.ApplyLocked(update));
  return out;
}

Status MemoryJobStore::DeleteWithOperation(int64_t project_number, const std::string& location,
                                           int64_t id, int64_t expected_version,
                                           const Operation& operation) {
  std::lock_guard lock(db_.mu);
  const MemoryJob* job = db_.FindJobLocked(id);
  if (job == nullptr || job->record.project_number != project_number ||
      job->record.location != location) {
    return NotFound("custom job not found");
  }
  if (job->record.version != expected_version) {
    return Aborted("the job changed concurrently; retry the delete");
  }
  const JobRecord& r = job->record;
  if (r.next_action_at) {
    if (job->lease_owner) {
      db_.owned[*job->lease_owner].erase({*r.next_action_at, id});
    } else {
      db_.unclaimed.erase({*r.next_action_at, id});
    }
  }
  db_.changes.erase(r.change_seq);
  db_.EraseJobLocked(id);
  db_.operations[operation.id] = operation;  // with the delete, as the PostgreSQL store writes it
  return Status::Ok();
}

StatusOr<int64_t> MemoryJobStore::Heartbeat(const std::string& owner, std::chrono::seconds) {
  std::lock_guard lock(db_.mu);
  auto it = db_.owned.find(owner);
  return it == db_.owned.end() ? 0 : static_cast<int64_t>(it->second.size());
}

StatusOr<ClaimCounts> MemoryJobStore::Claim(const std::string& owner, int limit,
                                            std::chrono::seconds) {
  std::lock_guard lock(db_.mu);
  ClaimCounts counts;
  auto& mine = db_.owned[owner];
  while (counts.claimed < limit && !db_.unclaimed.empty()) {
    auto first = db_.unclaimed.begin();
    db_.FindJobLocked(first->second)->lease_owner = owner;
    mine.insert(*first);
    db_.unclaimed.erase(first);
    ++counts.claimed;
  }
  return counts;
}

StatusOr<std::vector<JobRecord>> MemoryJobStore::Due(const std::string& owner, Timestamp now,
                                                     int limit) {
  std::lock_guard lock(db_.mu);
  std::vector<JobRecord> out;
  auto it = db_.owned.find(owner);
  if (it == db_.owned.end()) return out;
  for (const auto& [at, id] : it->second) {
    if (at > now || static_cast<int>(out.size()) >= limit) break;
    out.push_back(db_.FindJobLocked(id)->record);  // every filed action is a stored job's
  }
  return out;
}

StatusOr<std::vector<int64_t>> MemoryJobStore::ReleaseAll(const std::string& owner) {
  std::lock_guard lock(db_.mu);
  std::vector<int64_t> out;
  auto it = db_.owned.find(owner);
  if (it == db_.owned.end()) return out;
  for (const auto& entry : it->second) {
    db_.FindJobLocked(entry.second)->lease_owner.reset();
    db_.unclaimed.insert(entry);
    out.push_back(entry.second);
  }
  db_.owned.erase(it);
  return out;
}

StatusOr<std::vector<JobVersion>> MemoryJobStore::ListVersions(const ListJobsQuery& query) {
  TY_ASSIGN_OR_RETURN(std::vector<JobRecord> rows, List(query));
  std::vector<JobVersion> out;
  for (const JobRecord& r : rows) out.push_back(JobVersion{r.id, r.version});
  return out;
}

StatusOr<std::vector<JobRecord>> MemoryJobStore::ByIds(const std::vector<int64_t>& ids) {
  std::lock_guard lock(db_.mu);
  std::vector<JobRecord> out;
  for (int64_t id : ids) {
    if (const MemoryJob* job = db_.FindJobLocked(id)) out.push_back(job->record);
  }
  return out;
}

StatusOr<std::optional<Timestamp>> MemoryJobStore::NextDue(const std::string& owner) {
  std::lock_guard lock(db_.mu);
  auto it = db_.owned.find(owner);
  if (it == db_.owned.end() || it->second.empty()) return std::optional<Timestamp>();
  return std::optional<Timestamp>(it->second.begin()->first);
}

}  // namespace trainyard::storage::memory
