#include "api/operation_handler.h"

#include "api/json_body.h"
#include "api/wire/operation_codec.h"

namespace trainyard::api {

void OperationHandler::Register(Router& router) {
  const std::string base = "/{version}/projects/{project}/locations/{location}";
  auto get = [this](const HttpRequest& r, const RouteMatch& m) -> StatusOr<HttpResponse> {
    return Get(r, m);
  };
  router.Add("GET", base + "/operations/{operation}", get);
  router.Add("POST", base + "/operations/{operation}:wait",
             get);  // every operation we make is done
  router.Add("GET", base + "/{collection}/{resource}/operations/{operation}", get);
  router.Add("POST", base + "/{collection}/{resource}/operations/{operation}:wait", get);
}

StatusOr<HttpResponse> OperationHandler::Get(const HttpRequest&, const RouteMatch& match) {
  OperationRef ref;
  ref.parent = ParentRef{match.params.at("project"), match.params.at("location")};
  ref.operation_id = match.params.at("operation");
  if (auto it = match.params.find("collection"); it != match.params.end()) {
    ref.collection = it->second;
    ref.resource_id = match.params.at("resource");
  }
  auto op = jobs_.GetOperation(ref);
  TY_RETURN_IF_ERROR(op.status());
  return JsonResponse(EncodeOperation(*op));
}

}  // namespace trainyard::api
