#include "services/metrics/registry.h"

#include "services/log.h"

namespace trainyard::metrics {

void Registry::Add(Collector collector) {
  std::lock_guard lock(mu_);
  collectors_.push_back(std::move(collector));
}

std::string Registry::Render() {
  std::lock_guard lock(mu_);
  std::string out;
  for (const Collector& collect : collectors_) {
    Exposition e;
    if (Status s = collect(e); !s.ok()) {
      ++collector_errors_;
      LogJson(LogLevel::kWarn, "metrics_collector_failed", {{"error", s.message()}});
      continue;
    }
    out += e.text();
  }
  Exposition e;
  e.Family("trainyard_metrics_collector_errors_total", "counter",
           "Scrapes that left out a part of the metrics because it could not be read.");
  e.Sample("trainyard_metrics_collector_errors_total", {}, static_cast<double>(collector_errors_));
  return out + e.text();
}

}  // namespace trainyard::metrics
