#include "api/admin_fleet_handler.h"

#include "api/json_body.h"
#include "api/wire/admin_codec.h"

namespace trainyard::api {

void AdminFleetHandler::Register(Router& router) {
  router.Add("GET", "/trainyard/v1/fleet", Access::kFleetAdmin,
             [this](const HttpRequest&, const RouteMatch&) -> StatusOr<HttpResponse> {
               auto fleet = admin_.FleetStatus();
               TY_RETURN_IF_ERROR(fleet.status());
               return JsonResponse(EncodeFleetView(*fleet));
             });
}

}  // namespace trainyard::api
