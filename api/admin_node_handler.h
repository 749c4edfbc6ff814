#pragma once
// GET /trainyard/v1/nodes?pool=&zone=&state=&pageSize=&pageToken=: node slots in (pool, ordinal)
// order with their state, job, since when, and image cache.
#include "api/router.h"
#include "services/admin/admin_service.h"

namespace trainyard::api {

class AdminNodeHandler {
 public:
  explicit AdminNodeHandler(AdminService& admin) : admin_(admin) {}
  void Register(Router& router);

 private:
  StatusOr<HttpResponse> List(const HttpRequest& request);

  AdminService& admin_;
};

}  // namespace trainyard::api
