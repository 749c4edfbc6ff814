#pragma once
// The listener of `serve --metrics-listen`: GET /metrics alone, on a port of its own, so a
// scraper reaches it where the API is not exposed (and the API's rate limits never throttle a
// scrape). With tokens on it asks for the fleet-admin role as the main listener's route does.
#include "api/http_server.h"
#include "api/http_types.h"
#include "services/auth/token_service.h"
#include "services/metrics/registry.h"

namespace trainyard::api {

class MetricsEndpoint {
 public:
  // `tokens` null: no authentication.
  MetricsEndpoint(metrics::Registry& registry, TokenService* tokens)
      : registry_(registry), tokens_(tokens) {}

  HttpResponse Handle(HttpRequest& request);
  Handler AsHandler() {
    return [this](HttpRequest& r) { return Handle(r); };
  }

 private:
  metrics::Registry& registry_;
  TokenService* tokens_;
};

}  // namespace trainyard::api
