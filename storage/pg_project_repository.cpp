#include "storage/pg_project_repository.h"

namespace trainyard::storage {
namespace {

constexpr const char* kByNumber =
    "SELECT number, project_id FROM projects WHERE number = $1::bigint";
constexpr const char* kById = "SELECT number, project_id FROM projects WHERE project_id = $1";
constexpr const char* kList =
    "SELECT number, project_id FROM projects ORDER BY project_id LIMIT $1::int";
constexpr const char* kRegister =
    "INSERT INTO projects (project_id) VALUES ($1) ON CONFLICT (project_id) DO NOTHING "
    "RETURNING number, project_id";

}  // namespace

std::optional<Project> PgProjectRepository::Cached(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = cache_.find(key);
  if (it == cache_.end()) return std::nullopt;
  return it->second;
}

void PgProjectRepository::Remember(const Project& project) {
  std::lock_guard lock(mu_);
  cache_[project.id] = project;
  cache_[std::to_string(project.number)] = project;
}

StatusOr<Project> PgProjectRepository::Resolve(const std::string& id_or_number,
                                               bool create_if_missing) {
  if (auto hit = Cached(id_or_number)) return *hit;
  TY_ASSIGN_OR_RETURN(const bool numeric, IsProjectNumber(id_or_number));
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Result found, conn->Exec(numeric ? kByNumber : kById, {id_or_number}));
  if (found.rows() == 0 && create_if_missing && !numeric) {
    TY_ASSIGN_OR_RETURN(pg::Result inserted, conn->Exec(kRegister, {id_or_number}));
    if (inserted.rows() == 0) {  // another request registered it first
      TY_ASSIGN_OR_RETURN(found, conn->Exec(kById, {id_or_number}));
    } else {
      found = std::move(inserted);
    }
  }
  if (found.rows() == 0) return NotFound("project " + id_or_number + " not found");
  Project project{found.GetInt64(0, 0), std::string(found.Get(0, 1))};
  Remember(project);
  return project;
}

StatusOr<std::vector<Project>> PgProjectRepository::List(int limit) {
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kList, {std::to_string(limit)}));
  std::vector<Project> out;
  for (int i = 0; i < r.rows(); ++i) out.push_back({r.GetInt64(i, 0), std::string(r.Get(i, 1))});
  return out;
}

}  // namespace trainyard::storage
