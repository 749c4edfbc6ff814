#include "storage/cached_job_store.h"

namespace trainyard::storage {

Status CachedJobStore::Insert(const JobRecord& record, const std::string& request_id) {
  return store_.Insert(record, request_id);
}

StatusOr<JobRecord> CachedJobStore::Get(int64_t project_number, const std::string& location,
                                        int64_t id) {
  if (auto kept = cache_.Find(id)) {
    // Ids are unique over every project: a kept job asked for under another parent is not found.
    if (kept->project_number != project_number || kept->location != location) {
      return NotFound("custom job not found");
    }
    return *kept;
  }
  auto ticket = cache_.BeginRead();
  auto record = store_.Get(project_number, location, id);
  if (record.ok()) cache_.Put(ticket, std::make_shared<const JobRecord>(*record));
  return record;
}

StatusOr<std::vector<JobRecord>> CachedJobStore::List(const ListJobsQuery& query) {
  return store_.List(query);
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
