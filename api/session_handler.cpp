#include "api/session_handler.h"

#include <nlohmann/json.hpp>

#include "api/json_body.h"

namespace trainyard::api {
namespace {

// The picker lists this many at most; a fleet with more names its project by hand.
constexpr int kMaxProjects = 500;

}  // namespace

void SessionHandler::Register(Router& router) {
  router.Add("GET", "/trainyard/v1/session", Access::kProjectViewer,
             [this](const HttpRequest& request, const RouteMatch&) { return Get(request); });
}

StatusOr<HttpResponse> SessionHandler::Get(const HttpRequest& request) const {
  nlohmann::json out;
  out["authentication"] = tokens_on_ ? "TOKENS" : "NONE";
  nlohmann::json projects = nlohmann::json::array();
  // Without tokens every caller may do everything, as a fleet admin may.
  const bool everything = !request.principal || request.principal->fleet_admin;
  if (everything) {
    out["role"] = "admin";
    out["fleetAdmin"] = true;
    if (projects_ != nullptr) {
      TY_ASSIGN_OR_RETURN(std::vector<Project> all, projects_->List(kMaxProjects));
      for (const Project& p : all) projects.push_back(p.id);
    }
  } else {
    out["role"] = std::string(RoleName(request.principal->role));
    out["fleetAdmin"] = false;
    projects.push_back(request.principal->project_id);
  }
  out["projects"] = std::move(projects);
  return JsonResponse(out);
}

}  // namespace trainyard::api
