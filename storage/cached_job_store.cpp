#include "storage/cached_job_store.h"

#include <memory>
#include <unordered_map>

namespace trainyard::storage {

Status CachedJobStore::Insert(const JobRecord& record, const std::string& request_id) {
  return store_.Insert(record, request_id);
}

StatusOr<JobRecord> CachedJobStore::Get(int64_t project_number, const std::string& location,
                                        int64_t id) {
  TY_ASSIGN_OR_RETURN(std::shared_ptr<const JobRecord> shared,
                      GetShared(project_number, location, id));
  return *shared;
}

StatusOr<std::shared_ptr<const JobRecord>> CachedJobStore::GetShared(int64_t project_number,
                                                                     const std::string& location,
                                                                     int64_t id) {
  if (auto kept = cache_.Find(id)) {
    // Ids are unique over every project: a kept job asked for under another parent is not found.
    if (kept->project_number != project_number || kept->location != location) {
      return NotFound("custom job not found");
    }
    return kept;
  }
  auto ticket = cache_.BeginRead();
  TY_ASSIGN_OR_RETURN(JobRecord record, store_.Get(project_number, location, id));
  auto shared = std::make_shared<const JobRecord>(std::move(record));
  cache_.Put(ticket, shared);
  return shared;
}

StatusOr<std::vector<JobRecord>> CachedJobStore::List(const ListJobsQuery& query) {
  if (!cache_.live()) return store_.List(query);
  auto ticket = cache_.BeginRead();
  TY_ASSIGN_OR_RETURN(std::vector<JobVersion> page, store_.ListVersions(query));
  std::vector<std::shared_ptr<const JobRecord>> rows(page.size());
  std::vector<int64_t> missing;
  for (size_t i = 0; i < page.size(); ++i) {
    auto kept = cache_.Find(page[i].id);
    if (kept && kept->version == page[i].version) {
      rows[i] = std::move(kept);
    } else {
      missing.push_back(page[i].id);
    }
  }
  if (!missing.empty()) {
    TY_ASSIGN_OR_RETURN(std::vector<JobRecord> read, store_.ByIds(missing));
    std::unordered_map<int64_t, std::shared_ptr<const JobRecord>> by_id;
    for (JobRecord& r : read) {
      auto record = std::make_shared<const JobRecord>(std::move(r));
      cache_.Put(ticket, record);
      by_id.emplace(record->id, std::move(record));
    }
    for (size_t i = 0; i < page.size(); ++i) {
      if (rows[i]) continue;
      auto it = by_id.find(page[i].id);
      // Changed or gone between the two reads: the page would mix two moments (a job that no
      // longer matches the filter), so it is read whole, once.
      if (it == by_id.end() || it->second->version != page[i].version) return store_.List(query);
      rows[i] = it->second;
    }
  }
  std::vector<JobRecord> out;
  out.reserve(rows.size());
  for (const auto& row : rows) out.push_back(*row);
  return out;
}

StatusOr<std::vector<JobVersion>> CachedJobStore::ListVersions(const ListJobsQuery& query) {
  return store_.ListVersions(query);
}

StatusOr<std::vector<JobRecord>> CachedJobStore::ByIds(const std::vector<int64_t>& ids) {
  return store_.ByIds(ids);
}

// A write that applied changed the job; one that did not found it moved on, so what is kept of
// it is older than the database: either way it goes.
StatusOr<bool> CachedJobStore::ApplyTransition(const StateUpdate& update) {
  auto applied = store_.ApplyTransition(update);
  cache_.Invalidate(update.id);
  return applied;
}

StatusOr<std::vector<bool>> CachedJobStore::ApplyTransitions(
    const std::vector<StateUpdate>& updates) {
  auto applied = store_.ApplyTransitions(updates);
  for (const StateUpdate& update : updates) cache_.Invalidate(update.id);
  return applied;
}

Status CachedJobStore::DeleteWithOperation(int64_t project_number, const std::string& location,
                                           int64_t id, int64_t expected_version,
                                           const Operation& operation) {
  Status deleted =
      store_.DeleteWithOperation(project_number, location, id, expected_version, operation);
  cache_.Invalidate(id);
  return deleted;
}

}  // namespace trainyard::storage
