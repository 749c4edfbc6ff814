#pragma once
// Who may do what. A token belongs to one project with one role, or is the fleet's operator
// (fleet-admin). Each route states the access it needs (api/router.h); the request pipeline checks
// it once, before any handler runs.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "services/status.h"

namespace trainyard {

// Project roles are ordered: each may do everything the ones before it may. kMetricsViewer is
// apart: a token of no project that may scrape /metrics and nothing else, so Prometheus never
// holds a fleet-admin token.
enum class Role { kViewer = 1, kEditor = 2, kAdmin = 3, kMetricsViewer = 4 };

std::string_view RoleName(Role role);
std::optional<Role> ParseRole(std::string_view name);

// What a route needs.
enum class Access {
  kPublic,         // no token (health checks)
  kProjectViewer,  // reads of the project the route names
  kProjectEditor,  // jobs: create, cancel, delete
  kProjectAdmin,   // persistent resources and their operations
  kFleetAdmin,     // the fleet-wide admin view and fault injection
  kMetrics,        // GET /metrics: a fleet admin or a metrics viewer
};

// The authenticated caller.
struct Principal {
  int64_t token_id = 0;
  int64_t project_number = 0;  // 0 for a fleet-admin token
  std::string project_id;
  Role role = Role::kViewer;
  bool fleet_admin = false;
};

// Whether the principal's role covers `access` on its own project (the project check is the
// authorizer's). A fleet-admin token may do anything on any project.
bool RoleCovers(const Principal& principal, Access access);

// OK when the principal may use `access` on `project` (the id or number a path or body names; ""
// for routes that name none). Otherwise Vertex's 403, worded the same whether or not the project
// or resource exists, so a denial tells nothing about another project. `permission` names what
// was asked, e.g. "aiplatform.customJobs.create".
Status Authorize(const Principal& principal, Access access, std::string_view project,
                 std::string_view permission);

}  // namespace trainyard
