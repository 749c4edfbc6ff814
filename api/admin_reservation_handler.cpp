#include "api/admin_reservation_handler.h"

#include "api/error_body.h"
#include "api/json_body.h"
#include "api/wire/admin_codec.h"

namespace trainyard::api {

void AdminReservationHandler::Register(Router& router) {
  router.Add("GET", "/trainyard/v1/reservations",
             [this](const HttpRequest& request, const RouteMatch&) {
               auto reservations = admin_.Reservations();
               if (!reservations.ok()) {
                 return ErrorResponse(reservations.status(), request.request_id);
               }
               return JsonResponse(EncodeReservations(*reservations));
             });
}

}  // namespace trainyard::api
