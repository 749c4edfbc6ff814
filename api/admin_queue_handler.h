#pragma once
// GET /trainyard/v1/queues?jobsPerQueue=N: per (project, region) queue, its QUEUED jobs by queue
// position with the scheduler's reason, and its pending/running counts.
#include "api/router.h"
#include "services/admin/admin_service.h"

namespace trainyard::api {

class AdminQueueHandler {
 public:
  explicit AdminQueueHandler(AdminService& admin) : admin_(admin) {}
  void Register(Router& router);

 private:
  AdminService& admin_;
};

}  // namespace trainyard::api
