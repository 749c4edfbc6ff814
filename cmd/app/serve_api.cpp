#include "cmd/app/serve_api.h"

#include <algorithm>
#include <thread>

namespace trainyard::app {

api::ServerOptions ApiServerOptions(const ServeOptions& options, const ServeFlags& flags,
                                    RequestGauge& writes_in_flight) {
  api::ServerOptions server;
  server.host = flags.api.host;
  server.port = flags.api.port;
  server.tls_cert_file = options.tls_cert;
  server.tls_key_file = options.tls_key;
  server.threads = options.http_threads;
  server.max_connections = options.max_connections;
  server.writes_in_flight = &writes_in_flight;
  // Reads never wait on a commit: twice the cores (docs/performance.md).
  server.io_threads = static_cast<int>(std::max(2u, 2 * std::thread::hardware_concurrency()));
  return server;
}

api::RequestGuardOptions ListenerGuard(const ServeOptions& options, const ServeFlags& flags,
                                       bool https) {
  return api::RequestGuardOptions{!flags.tokens, options.allowed_hosts, https};
}

api::ApiService::Services ApiServices(ControlPlane& plane, PgAdapters& adapters,
                                      const ServeOptions& options, const ServeFlags& flags,
                                      metrics::Registry& metrics, WhatIfService& whatif) {
  api::ApiService::Services services{
      plane.jobs(),
      plane.operations(),
      plane.resources(),
      plane.admin(),
      &plane.injector(),
      &plane.logs(),
      flags.tokens ? &plane.tokens() : nullptr,
      api::RateLimit{options.rate_limit, 2 * options.rate_limit},
      api::RateLimit{options.create_rate_limit, 2 * options.create_rate_limit},
      &metrics,
      &plane.utilization(),
      &adapters.projects()};
  services.whatif = &whatif;
  return services;
}

}  // namespace trainyard::app
