#pragma once
// Job logs on PostgreSQL: replica lines in job_log_lines (bounded per job by JobLogRetention),
// read merged with the job's job_events as the service's entries.
#include "services/logs/job_log_repository.h"
#include "storage/pg.h"

namespace trainyard::storage {

class PgJobLogStore final : public JobLogRepository {
 public:
  PgJobLogStore(pg::Pool& pool, JobLogRetention retention) : pool_(pool), retention_(retention) {}

  Status Append(const std::vector<LogLine>& lines) override;
  StatusOr<LogPage> List(const LogQuery& query) override;

 private:
  pg::Pool& pool_;
  const JobLogRetention retention_;
};

}  // namespace trainyard::storage
