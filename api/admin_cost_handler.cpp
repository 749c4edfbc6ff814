#include "api/admin_cost_handler.h"

#include "api/error_body.h"
#include "api/json_body.h"
#include "api/wire/admin_codec.h"

namespace trainyard::api {

void AdminCostHandler::Register(Router& router) {
  router.Add("GET", "/trainyard/v1/projects/{project}/costs",
             [this](const HttpRequest& request, const RouteMatch& match) {
               auto costs = admin_.ProjectCosts(match.params.at("project"));
               if (!costs.ok()) return ErrorResponse(costs.status(), request.request_id);
               return JsonResponse(EncodeProjectCosts(*costs));
             });
}

}  // namespace trainyard::api
