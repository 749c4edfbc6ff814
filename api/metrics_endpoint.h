#pragma once
// The listener of `serve --metrics-listen`: GET /metrics alone, on a port of its own, so a
// scraper reaches it where the API is not exposed (and the API's rate limits never throttle a
// scrape). With tokens on it asks for the metrics-viewer (or fleet-admin) role as the main
// listener's route does; without, it refuses what a web page could send (api/request_guard.h).
#include "api/http_server.h"
#include "api/http_types.h"
#include "api/request_guard.h"
#include "services/auth/token_service.h"
#include "services/metrics/registry.h"

namespace trainyard::api {

class MetricsEndpoint {
 public:
  // `tokens` null: no authentication.
  MetricsEndpoint(metrics::Registry& registry, TokenService* tokens, RequestGuardOptions guard = {})
      : registry_(registry), tokens_(tokens), guard_(std::move(guard)) {}

  HttpResponse Handle(HttpRequest& request);
  Handler AsHandler() {
    return [this](HttpRequest& r) { return Handle(r); };
  }

 private:
  metrics::Registry& registry_;
  TokenService* tokens_;
  const RequestGuardOptions guard_;
};

}  // namespace trainyard::api
