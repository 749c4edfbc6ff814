#pragma once
// Operations, served flat (…/operations/{id}) and nested under their resource, under /v1, /v1beta1
// and /ui (the Node SDK polls /ui/…). gcloud only ever GETs the flat path.
#include "api/router.h"
#include "services/job_service.h"

namespace trainyard::api {

class OperationHandler {
 public:
  explicit OperationHandler(JobService& jobs) : jobs_(jobs) {}
  void Register(Router& router);

 private:
  StatusOr<HttpResponse> Get(const HttpRequest& request, const RouteMatch& match);
  JobService& jobs_;
};

}  // namespace trainyard::api
