#pragma once
#include <mutex>
#include <unordered_map>

#include "services/jobs/job_repository.h"
#include "storage/pg.h"

namespace trainyard::storage {

// Projects never change once registered, so resolved ones are cached for the process lifetime:
// the polling path (GET job) then costs one query, not two.
class PgProjectRepository final : public ProjectRepository {
 public:
  explicit PgProjectRepository(pg::Pool& pool) : pool_(pool) {}
  StatusOr<Project> Resolve(const std::string& id_or_number, bool create_if_missing) override;
  StatusOr<std::vector<Project>> List(int limit) override;

 private:
  std::optional<Project> Cached(const std::string& key);
  void Remember(const Project& project);

  pg::Pool& pool_;
  std::mutex mu_;
  std::unordered_map<std::string, Project> cache_;  // by id and by number's digits
};

}  // namespace trainyard::storage
