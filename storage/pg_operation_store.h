#pragma once
// Operations on PostgreSQL: reads, and the requests clients make on them (cancel, delete).
#include "services/operations/operation_repository.h"
#include "storage/pg.h"

namespace trainyard::storage {

class PgOperationStore final : public OperationRepository {
 public:
  explicit PgOperationStore(pg::Pool& pool) : pool_(pool) {}
  StatusOr<Operation> Get(int64_t project_number, const std::string& location, int64_t id) override;
  StatusOr<std::vector<Operation>> List(const ListOperationsQuery& query) override;
  Status RequestCancel(int64_t project_number, const std::string& location, int64_t id,
                       Timestamp now) override;
  Status Delete(int64_t project_number, const std::string& location, int64_t id) override;

 private:
  pg::Pool& pool_;
};

}  // namespace trainyard::storage
