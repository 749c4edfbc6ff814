#include "cmd/app/metrics_listener.h"

namespace trainyard::app {

MetricsListener::MetricsListener(metrics::Registry& registry, TokenService* tokens,
                                 api::RequestGuardOptions guard)
    : endpoint_(registry, tokens, std::move(guard)) {}

MetricsListener::~MetricsListener() = default;

Status MetricsListener::Start(const ListenAddress& address) {
  api::ServerOptions options;
  options.host = address.host;
  options.port = address.port;
  options.io_threads = 2;  // one scrape at a time, and a health check beside it
  options.threads = 1;
  server_ = api::NewHttpServer(options, endpoint_.AsHandler());
  return server_->Start();
}

void MetricsListener::Stop(std::chrono::milliseconds drain) {
  if (server_) server_->Stop(drain);
}

}  // namespace trainyard::app
