#include "api/openapi_handler.h"

namespace trainyard::api {

StatusOr<HttpResponse> ServeOpenApi(const HttpRequest&, const RouteMatch&) {
  HttpResponse response;  // application/json, as every API answer
  response.body = std::string(OpenApiDocument());
  return response;
}

}  // namespace trainyard::api
