#pragma once
// customJobs on PostgreSQL: the API's repository and the runtime's leases over the same table.
#include "services/jobs/job_repository.h"
#include "storage/group_commit.h"
#include "storage/pg.h"

namespace trainyard::storage {

class PgJobStore final : public JobRepository, public JobLeaseRepository {
 public:
  explicit PgJobStore(pg::Pool& pool) : pool_(pool), creates_(pool) {}

  // JobRepository. Inserts from concurrent callers are group-committed (storage/group_commit.h).
  Status Insert(const JobRecord& record, const std::string& request_id) override;
  StatusOr<JobRecord> Get(int64_t project_number, const std::string& location, int64_t id) override;
  StatusOr<std::vector<JobRecord>> List(const ListJobsQuery& query) override;
  StatusOr<std::vector<JobVersion>> ListVersions(const ListJobsQuery& query) override;
  StatusOr<bool> ApplyTransition(const StateUpdate& update) override;
  StatusOr<std::vector<bool>> ApplyTransitions(const std::vector<StateUpdate>& updates) override;
  Status DeleteWithOperation(int64_t project_number, const std::string& location, int64_t id,
                             int64_t expected_version, const Operation& operation) override;

  // JobLeaseRepository
  StatusOr<int64_t> Heartbeat(const std::string& owner, std::chrono::seconds lease) override;
  StatusOr<ClaimCounts> Claim(const std::string& owner, int limit,
                              std::chrono::seconds lease) override;
  StatusOr<std::vector<JobRecord>> Due(const std::string& owner, Timestamp now, int limit) override;
  StatusOr<std::vector<int64_t>> ReleaseAll(const std::string& owner) override;
  StatusOr<std::optional<Timestamp>> NextDue(const std::string& owner) override;
  // Both ports' (JobRepository and JobLeaseRepository): the jobs with these ids that still exist.
  StatusOr<std::vector<JobRecord>> ByIds(const std::vector<int64_t>& ids) override;

  const GroupCommitter& creates() const { return creates_; }

 private:
  pg::Pool& pool_;
  GroupCommitter creates_;
};

}  // namespace trainyard::storage
