#pragma once
// persistentResources: create, get, list, patch, delete and :reboot, under /v1, /v1beta1 and /ui.
// Every change answers with its Operation.
#include "api/router.h"
#include "services/persistent_resources/resource_service.h"

namespace trainyard::api {

class PersistentResourceHandler {
 public:
  explicit PersistentResourceHandler(ResourceService& resources) : resources_(resources) {}
  void Register(Router& router);

 private:
  StatusOr<HttpResponse> Create(const HttpRequest& request, const RouteMatch& match);
  StatusOr<HttpResponse> Get(const HttpRequest& request, const RouteMatch& match);
  StatusOr<HttpResponse> List(const HttpRequest& request, const RouteMatch& match);
  StatusOr<HttpResponse> Patch(const HttpRequest& request, const RouteMatch& match);
  StatusOr<HttpResponse> Reboot(const HttpRequest& request, const RouteMatch& match);
  StatusOr<HttpResponse> Delete(const HttpRequest& request, const RouteMatch& match);
  ResourceService& resources_;
};

}  // namespace trainyard::api
