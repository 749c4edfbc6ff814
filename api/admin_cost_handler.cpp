#include "api/admin_cost_handler.h"

#include "api/json_body.h"
#include "api/wire/admin_codec.h"

namespace trainyard::api {

void AdminCostHandler::Register(Router& router) {
  router.Add("GET", "/trainyard/v1/projects/{project}/costs", Access::kProjectViewer,
             [this](const HttpRequest&, const RouteMatch& match) -> StatusOr<HttpResponse> {
               auto costs = admin_.ProjectCosts(match.params.at("project"));
               TY_RETURN_IF_ERROR(costs.status());
               return JsonResponse(EncodeProjectCosts(*costs));
             });
}

}  // namespace trainyard::api
