#pragma once
// HTTP figures per route template and method: requests by status code and a latency histogram.
// Each route owns its series from registration on, so recording a request is a few relaxed atomic
// adds and takes no lock; the label values are the route's template, never a path with ids in it.
#include <array>
#include <atomic>
#include <string>
#include <vector>

#include "services/metrics/exposition.h"
#include "services/metrics/histogram.h"

namespace trainyard::api {

class RouteStats {
 public:
  RouteStats(std::string route, std::string method);
  void Record(int status, double seconds) const;
  const std::string& route() const { return route_; }

  // Writes this route's samples of trainyard_http_requests_total (counts) or of
  // trainyard_http_request_duration_seconds (latency); the caller writes the family headers.
  void WriteCounts(metrics::Exposition& e) const;
  void WriteLatency(metrics::Exposition& e) const;

 private:
  std::string route_;
  std::string method_;
  // Recording is const: a route's figures change under a const view of the route table.
  mutable std::array<std::atomic<uint64_t>, 500> by_status_{};  // status 100..599
  mutable metrics::Histogram latency_{metrics::kLatencyBuckets};
};

// Every route's series under the two families.
void WriteRequestFamilies(const std::vector<const RouteStats*>& routes, metrics::Exposition& e);

}  // namespace trainyard::api
