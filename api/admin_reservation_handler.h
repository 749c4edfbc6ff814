#pragma once
// GET /trainyard/v1/reservations: CUD and DWS calendar reservations, their owners, terms and
// windows, and how many of their nodes are busy, free or down.
#include "api/router.h"
#include "services/admin/admin_service.h"

namespace trainyard::api {

class AdminReservationHandler {
 public:
  explicit AdminReservationHandler(AdminService& admin) : admin_(admin) {}
  void Register(Router& router);

 private:
  AdminService& admin_;
};

}  // namespace trainyard::api
