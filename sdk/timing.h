#pragma once
// Time as the SDK sees it: a monotonic now, a sleep, and a random source for jitter. Tests replace
// all three so that waits and retries run without really sleeping.
#include <chrono>
#include <functional>
#include <string>

namespace trainyard::sdk {

struct Timing {
  std::function<std::chrono::steady_clock::time_point()> now;
  std::function<void(std::chrono::milliseconds)> sleep;
  std::function<double()> uniform01;  // in [0, 1)
};

// "12.3s": how wait lines and timeout messages show a span.
std::string FormatElapsed(std::chrono::milliseconds elapsed);

// steady_clock, std::this_thread::sleep_for and a per-thread seeded generator.
Timing SystemTiming();

}  // namespace trainyard::sdk
