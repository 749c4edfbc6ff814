#include "api/admin_fleet_handler.h"

#include "api/error_body.h"
#include "api/json_body.h"
#include "api/wire/admin_codec.h"

namespace trainyard::api {

void AdminFleetHandler::Register(Router& router) {
  router.Add("GET", "/trainyard/v1/fleet", [this](const HttpRequest& request, const RouteMatch&) {
    auto fleet = admin_.FleetStatus();
    if (!fleet.ok()) return ErrorResponse(fleet.status(), request.request_id);
    return JsonResponse(EncodeFleetView(*fleet));
  });
}

}  // namespace trainyard::api
