#pragma once
// `serve --metrics-listen`: GET /metrics alone on a port of its own (api/metrics_endpoint.h), one
// scrape at a time with a health check beside it.
#include <chrono>
#include <memory>

#include "api/http_server.h"
#include "api/metrics_endpoint.h"
#include "api/request_guard.h"
#include "cmd/app/serve_flags.h"
#include "services/auth/token_service.h"
#include "services/metrics/registry.h"

namespace trainyard::app {

class MetricsListener {
 public:
  // `tokens` null: no authentication. `registry` and `tokens` must outlive it.
  MetricsListener(metrics::Registry& registry, TokenService* tokens,
                  api::RequestGuardOptions guard);
  ~MetricsListener();
  MetricsListener(const MetricsListener&) = delete;
  MetricsListener& operator=(const MetricsListener&) = delete;

  Status Start(const ListenAddress& address);
  // Closes the port, giving the scrape in flight up to `drain`.
  void Stop(std::chrono::milliseconds drain);

 private:
  api::MetricsEndpoint endpoint_;
  std::unique_ptr<api::HttpServer> server_;  // after the endpoint it serves: it goes first
};

}  // namespace trainyard::app
