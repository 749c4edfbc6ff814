#pragma once
// persistentResources on PostgreSQL: the API's repository. Every change is written with its
// operation in one transaction.
#include "services/persistent_resources/resource_repository.h"
#include "storage/pg.h"

namespace trainyard::storage {

class PgResourceStore final : public ResourceRepository {
 public:
  explicit PgResourceStore(pg::Pool& pool) : pool_(pool) {}

  Status Insert(const ResourceChange& change) override;
  StatusOr<ResourceRecord> Get(int64_t project_number, const std::string& location,
                               const std::string& resource_id) override;
  StatusOr<std::vector<ResourceRecord>> List(const ListResourcesQuery& query) override;
  StatusOr<std::optional<Operation>> Update(const ResourceChange& change) override;

 private:
  pg::Pool& pool_;
};

// The statements that record it (and end the one it supersedes).
std::vector<pg::Statement> OperationStatements(const ResourceChange& change);

}  // namespace trainyard::storage
