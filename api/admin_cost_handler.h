#pragma once
// GET /trainyard/v1/projects/{project}/costs: the project's cost, accrued and running, in total
// and per consumption model.
#include "api/router.h"
#include "services/admin/admin_service.h"

namespace trainyard::api {

class AdminCostHandler {
 public:
  explicit AdminCostHandler(AdminService& admin) : admin_(admin) {}
  void Register(Router& router);

 private:
  AdminService& admin_;
};

}  // namespace trainyard::api
