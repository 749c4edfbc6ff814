#include "services/metrics/histogram.h"

#include <algorithm>
#include <cmath>

namespace trainyard::metrics {

Histogram::Histogram(std::span<const double> bounds)
    : bounds_(bounds.begin(), bounds.end()), buckets_(bounds.size() + 1) {}

void Histogram::Observe(double value) {
  const size_t i = static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), value) -
                                       bounds_.begin());
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_micros_.fetch_add(static_cast<int64_t>(std::llround(value * 1e6)), std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::Read() const {
  Snapshot out;
  out.bounds = bounds_;
  uint64_t running = 0;
  for (const std::atomic<uint64_t>& bucket : buckets_) {
    running += bucket.load(std::memory_order_relaxed);
    out.cumulative.push_back(running);
  }
  // The buckets are read one by one while others record: the count shown is their total, so
  // the +Inf bucket and _count always agree.
  out.count = running;
  out.sum = static_cast<double>(sum_micros_.load(std::memory_order_relaxed)) / 1e6;
  return out;
}

}  // namespace trainyard::metrics
