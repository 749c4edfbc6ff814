#pragma once
// A JobRepository that answers Get from the process's JobRecordCache and everything else from the
// store beneath it. What this process writes through it is dropped from the cache before the write
// returns, so a client reads its own cancel or delete at once; what other writers commit is
// dropped when the change feed hears of it (storage/job_change_listener.h). A list reads the page's
// ids and versions, takes the rows it keeps at those versions and reads only the others: a page
// the console refreshes decodes nothing.
#include "services/jobs/job_repository.h"
#include "storage/job_record_cache.h"

namespace trainyard::storage {

class CachedJobStore final : public JobRepository {
 public:
  CachedJobStore(JobRepository& store, JobRecordCache& cache) : store_(store), cache_(cache) {}

  Status Insert(const JobRecord& record, const std::string& request_id) override;
  StatusOr<JobRecord> Get(int64_t project_number, const std::string& location, int64_t id) override;
  StatusOr<std::shared_ptr<const JobRecord>> GetShared(int64_t project_number,
                                                       const std::string& location,
                                                       int64_t id) override;
  StatusOr<std::vector<JobRecord>> List(const ListJobsQuery& query) override;
  StatusOr<std::vector<JobVersion>> ListVersions(const ListJobsQuery& query) override;
  StatusOr<std::vector<JobRecord>> ByIds(const std::vector<int64_t>& ids) override;
  StatusOr<bool> ApplyTransition(const StateUpdate& update) override;
  StatusOr<std::vector<bool>> ApplyTransitions(const std::vector<StateUpdate>& updates) override;
  Status DeleteWithOperation(int64_t project_number, const std::string& location, int64_t id,
                             int64_t expected_version, const Operation& operation) override;

 private:
  JobRepository& store_;
  JobRecordCache& cache_;
};

}  // namespace trainyard::storage
