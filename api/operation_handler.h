#pragma once
// Operations, served flat (…/operations/{id}) and nested under their resource
// (…/persistentResources/{id}/operations/{op}, …/customJobs/{id}/operations/{op}), under /v1,
// /v1beta1 and /ui (the Node SDK polls /ui/…): get, list, cancel, delete and :wait. gcloud only
// ever GETs the flat path.
#include "api/router.h"
#include "services/operations/operation_service.h"

namespace trainyard::api {

class OperationHandler {
 public:
  explicit OperationHandler(OperationService& operations) : operations_(operations) {}
  void Register(Router& router);

 private:
  StatusOr<HttpResponse> Get(const HttpRequest& request, const RouteMatch& match);
  StatusOr<HttpResponse> List(const HttpRequest& request, const RouteMatch& match);
  StatusOr<HttpResponse> Cancel(const HttpRequest& request, const RouteMatch& match);
  StatusOr<HttpResponse> Delete(const HttpRequest& request, const RouteMatch& match);
  StatusOr<HttpResponse> Wait(const HttpRequest& request, const RouteMatch& match);
  OperationService& operations_;
};

}  // namespace trainyard::api
