#pragma once
// GET /trainyard/v1/projects/{p}/locations/{l}/customJobs/{id}/utilization: the job's hosts with
// their simulated accelerator figures and which of them stand out.
#include "api/router.h"
#include "services/telemetry/utilization_service.h"

namespace trainyard::api {

class JobUtilizationHandler {
 public:
  explicit JobUtilizationHandler(UtilizationService& utilization) : utilization_(utilization) {}
  void Register(Router& router);

 private:
  UtilizationService& utilization_;
};

}  // namespace trainyard::api
