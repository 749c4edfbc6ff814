#include "api/metrics_endpoint.h"

#include "api/api_service.h"
#include "api/error_body.h"
#include "services/auth/access.h"
#include "services/metrics/exposition.h"

namespace trainyard::api {

HttpResponse MetricsEndpoint::Handle(HttpRequest& request) {
  request.request_id = RequestIdFor(request);
  if (auto refused = GuardRequest(request, guard_)) {
    return ErrorResponse(refused->status, request.request_id, refused->http_status);
  }
  if (request.path != "/metrics") {
    return ErrorResponse(NotFound("this port serves GET /metrics only"), request.request_id);
  }
  if (request.method != "GET") {
    return ErrorResponse(NotFound("method not allowed: " + request.method + " /metrics"),
                         request.request_id);
  }
  if (tokens_ != nullptr) {
    Status admitted = [&]() -> Status {
      TY_ASSIGN_OR_RETURN(
          Principal principal,
          tokens_->Authenticate(request.Header("authorization"), request.request_id));
      return Authorize(principal, Access::kMetrics, "", "trainyard.metrics.get");
    }();
    if (!admitted.ok()) return DeniedResponse(admitted, request.request_id);
  }
  HttpResponse response;
  response.content_type = std::string(metrics::kContentType);
  response.body = registry_.Render();
  response.headers.emplace_back("X-Request-Id", request.request_id);
  return response;
}

}  // namespace trainyard::api
