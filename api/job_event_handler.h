#pragma once
// GET /trainyard/v1/projects/{p}/locations/{l}/customJobs/{id}/events: the job's state changes
// and scheduler reason changes, oldest first.
#include "api/router.h"
#include "services/admin/admin_service.h"

namespace trainyard::api {

class JobEventHandler {
 public:
  explicit JobEventHandler(AdminService& admin) : admin_(admin) {}
  void Register(Router& router);

 private:
  AdminService& admin_;
};

}  // namespace trainyard::api
