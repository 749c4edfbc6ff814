#pragma once
// Jobs in memory (storage/memory/memory_database.h): the API's repository and the runtime's
// leases. Leases never expire by time here: one process holds them all, and a stopping one gives
// them back.
#include "services/jobs/job_repository.h"
#include "storage/memory/memory_database.h"

namespace trainyard::storage::memory {

class MemoryProjectRepository final : public ProjectRepository {
 public:
  explicit MemoryProjectRepository(MemoryDatabase& db) : db_(db) {}
  StatusOr<Project> Resolve(const std::string& id_or_number, bool create_if_missing) override;
  StatusOr<std::vector<Project>> List(int limit) override;

 private:
  MemoryDatabase& db_;
};

class MemoryJobStore final : public JobRepository, public JobLeaseRepository {
 public:
  explicit MemoryJobStore(MemoryDatabase& db) : db_(db) {}

  Status Insert(const JobRecord& record, const std::string& request_id) override;
  StatusOr<JobRecord> Get(int64_t project_number, const std::string& location, int64_t id) override;
  // Newest first, by page; a filter is not evaluated in memory (UNIMPLEMENTED).
  StatusOr<std::vector<JobRecord>> List(const ListJobsQuery& query) override;
  StatusOr<std::vector<JobVersion>> ListVersions(const ListJobsQuery& query) override;
  StatusOr<bool> ApplyTransition(const StateUpdate& update) override;
  StatusOr<std::vector<bool>> ApplyTransitions(const std::vector<StateUpdate>& updates) override;
  Status DeleteWithOperation(int64_t project_number, const std::string& location, int64_t id,
                             int64_t expected_version, const Operation& operation) override;

  StatusOr<int64_t> Heartbeat(const std::string& owner, std::chrono::seconds lease) override;
  StatusOr<ClaimCounts> Claim(const std::string& owner, int limit,
                              std::chrono::seconds lease) override;
  StatusOr<std::vector<JobRecord>> Due(const std::string& owner, Timestamp now, int limit) override;
  StatusOr<std::vector<int64_t>> ReleaseAll(const std::string& owner) override;
  // Both ports' (JobRepository and JobLeaseRepository): the jobs with these ids that still exist.
  StatusOr<std::vector<JobRecord>> ByIds(const std::vector<int64_t>& ids) override;
  StatusOr<std::optional<Timestamp>> NextDue(const std::string& owner) override;

 private:
  MemoryDatabase& db_;
};

}  // namespace trainyard::storage::memory
