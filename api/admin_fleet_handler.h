#pragma once
// GET /trainyard/v1/fleet: regions → zones → pools, each with its terms, price and node states.
#include "api/router.h"
#include "services/admin/admin_service.h"

namespace trainyard::api {

class AdminFleetHandler {
 public:
  explicit AdminFleetHandler(AdminService& admin) : admin_(admin) {}
  void Register(Router& router);

 private:
  AdminService& admin_;
};

}  // namespace trainyard::api
