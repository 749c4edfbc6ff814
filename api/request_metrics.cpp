#include "api/request_metrics.h"

namespace trainyard::api {

RouteStats::RouteStats(std::string route, std::string method)
    : route_(std::move(route)), method_(std::move(method)) {}

void RouteStats::Record(int status, double seconds) const {
  if (status >= 100 && status <= 599) {
    by_status_[static_cast<size_t>(status - 100)].fetch_add(1, std::memory_order_relaxed);
  }
  latency_.Observe(seconds);
}

void RouteStats::WriteCounts(metrics::Exposition& e) const {
  for (size_t i = 0; i < by_status_.size(); ++i) {
    const uint64_t n = by_status_[i].load(std::memory_order_relaxed);
    if (n == 0) continue;
    const std::string code = std::to_string(i + 100);
    e.Sample("trainyard_http_requests_total",
             {{"route", route_}, {"method", method_}, {"code", code}}, static_cast<double>(n));
  }
}

void RouteStats::WriteLatency(metrics::Exposition& e) const {
  metrics::Histogram::Snapshot snapshot = latency_.Read();
  if (snapshot.count == 0) return;
  e.HistogramSamples("trainyard_http_request_duration_seconds",
                     {{"route", route_}, {"method", method_}}, snapshot);
}

void WriteRequestFamilies(const std::vector<const RouteStats*>& routes, metrics::Exposition& e) {
  e.Family("trainyard_http_requests_total", "counter",
           "HTTP requests answered, by route template, method and status code.");
  for (const RouteStats* r : routes) r->WriteCounts(e);
  e.Family("trainyard_http_request_duration_seconds", "histogram",
           "Time from a request's arrival at the pipeline to its answer, by route template.");
  for (const RouteStats* r : routes) r->WriteLatency(e);
}

}  // namespace trainyard::api
