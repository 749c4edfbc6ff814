#pragma once
// A Prometheus histogram that any thread records into without a lock: one atomic count per
// bucket, an atomic count and an atomic sum in microunits. Buckets are kept per bucket and made
// cumulative only when rendered.
#include <array>
#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

namespace trainyard::metrics {

// Latency buckets in seconds, 1 ms to 10 s (Prometheus's defaults, with a finer low end).
inline constexpr std::array<double, 14> kLatencyBuckets = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

class Histogram {
 public:
  explicit Histogram(std::span<const double> bounds);
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  void Observe(double value);

  struct Snapshot {
    std::vector<double> bounds;
    std::vector<uint64_t> cumulative;  // per bound, then +Inf last
    uint64_t count = 0;
    double sum = 0;
  };
  Snapshot Read() const;

 private:
  std::vector<double> bounds_;
  std::vector<std::atomic<uint64_t>> buckets_;  // bounds_.size() + 1 (+Inf)
  std::atomic<uint64_t> count_{0};
  std::atomic<int64_t> sum_micros_{0};
};

}  // namespace trainyard::metrics
