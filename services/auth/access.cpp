#include "services/auth/access.h"

namespace trainyard {

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kViewer:
      return "viewer";
    case Role::kEditor:
      return "editor";
    case Role::kAdmin:
      return "admin";
    case Role::kMetricsViewer:
      return "metrics-viewer";
  }
  return "viewer";
}

std::optional<Role> ParseRole(std::string_view name) {
  for (Role r : {Role::kViewer, Role::kEditor, Role::kAdmin, Role::kMetricsViewer}) {
    if (RoleName(r) == name) return r;
  }
  return std::nullopt;
}

bool RoleCovers(const Principal& principal, Access access) {
  if (principal.fleet_admin) return true;
  if (principal.role == Role::kMetricsViewer) {
    return access == Access::kPublic || access == Access::kMetrics;
  }
  switch (access) {
    case Access::kPublic:
    case Access::kProjectViewer:
      return true;
    case Access::kProjectEditor:
      return principal.role >= Role::kEditor;
    case Access::kProjectAdmin:
      return principal.role >= Role::kAdmin;
    case Access::kFleetAdmin:
    case Access::kMetrics:
      return false;
  }
  return false;
}

Status Authorize(const Principal& principal, Access access, std::string_view project,
                 std::string_view permission) {
  const bool own_project =
      principal.fleet_admin ||
      (!project.empty() &&
       (project == principal.project_id || project == std::to_string(principal.project_number)));
  const bool allowed =
      access == Access::kPublic ||
      (RoleCovers(principal, access) &&
       (access == Access::kFleetAdmin || access == Access::kMetrics || own_project));
  if (allowed) return Status::Ok();
  std::string resource = project.empty() ? "the fleet" : "projects/" + std::string(project);
  return Status(Code::kPermissionDenied, "Permission '" + std::string(permission) +
                                             "' denied on resource '" + resource +
                                             "' (or it may not exist).");
}

}  // namespace trainyard
