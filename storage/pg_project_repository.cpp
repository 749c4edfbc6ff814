#include "storage/pg_project_repository.h"

#include <algorithm>
#include <cctype>

namespace trainyard::storage {
namespace {

constexpr const char* kByNumber =
    "SELECT number, project_id FROM projects WHERE number = $1::bigint";
constexpr const char* kById = "SELECT number, project_id FROM projects WHERE project_id = $1";
constexpr const char* kRegister =
    "INSERT INTO projects (project_id) VALUES ($1) ON CONFLICT (project_id) DO NOTHING "
    "RETURNING number, project_id";

bool AllDigits(const std::string& s) {
  return !s.empty() && s.size() <= 18 &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// Looser than GCP's 6–30 lowercase rule on purpose: docs and SDK samples use ids like "P" or
// "demo", and domain-scoped ids ("example.com:proj") carry '.' and ':'.
bool ValidProjectId(const std::string& s) {
  if (s.empty() || s.size() > 63 || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == ':';
  });
}

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
  bool numeric = AllDigits(id_or_number);
  if (!numeric && !ValidProjectId(id_or_number)) {
    return InvalidArgument("invalid project \"" + id_or_number +
                           "\": expected a project id (a letter, then letters, digits, "
                           "'-', '_', '.', ':') or a project number");
  }
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

}  // namespace trainyard::storage
