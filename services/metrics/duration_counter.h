#pragma once
// A counter of time spent, shown on /metrics in seconds: one loop adds, scrapes read, no lock.
#include <atomic>
#include <chrono>
#include <cstdint>

namespace trainyard::metrics {

class DurationCounter {
 public:
  void Add(std::chrono::steady_clock::duration d) {
    micros_.fetch_add(
        static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(d).count()),
        std::memory_order_relaxed);
  }
  double seconds() const {
    return static_cast<double>(micros_.load(std::memory_order_relaxed)) / 1e6;
  }

 private:
  std::atomic<uint64_t> micros_{0};
};

}  // namespace trainyard::metrics
