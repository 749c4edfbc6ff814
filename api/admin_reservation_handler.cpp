#include "api/admin_reservation_handler.h"

#include "api/json_body.h"
#include "api/wire/admin_codec.h"

namespace trainyard::api {

void AdminReservationHandler::Register(Router& router) {
  router.Add("GET", "/trainyard/v1/reservations", Access::kFleetAdmin,
             [this](const HttpRequest&, const RouteMatch&) -> StatusOr<HttpResponse> {
               auto reservations = admin_.Reservations();
               if (!reservations.ok()) {
                 return reservations.status();
               }
               return JsonResponse(EncodeReservations(*reservations));
             });
}

}  // namespace trainyard::api
