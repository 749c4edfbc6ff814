#pragma once
// What /metrics shows: every part of the process that has figures registers a collector, which
// writes its families when scraped. Recording never goes through the registry (each part keeps its
// own atomics); only scrapes, and registration at start-up, take its lock.
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "services/metrics/exposition.h"
#include "services/status.h"

namespace trainyard::metrics {

// Writes one or more whole families; fails when a figure it reads (the database) cannot be had.
using Collector = std::function<Status(Exposition&)>;

class Registry {
 public:
  void Add(Collector collector);
  // The whole exposition. A collector that fails leaves its families out and is counted in
  // trainyard_metrics_collector_errors_total, so one slow part does not blank the page.
  std::string Render();

 private:
  std::mutex mu_;
  std::vector<Collector> collectors_;
  uint64_t collector_errors_ = 0;
};

}  // namespace trainyard::metrics
