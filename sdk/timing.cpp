#include "sdk/timing.h"

#include <cstdio>
#include <random>
#include <thread>

namespace trainyard::sdk {

std::string FormatElapsed(std::chrono::milliseconds elapsed) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1fs", static_cast<double>(elapsed.count()) / 1000.0);
  return text;
}

Timing SystemTiming() {
  Timing timing;
  timing.now = [] { return std::chrono::steady_clock::now(); };
  timing.sleep = [](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); };
  timing.uniform01 = [] {
    thread_local std::mt19937_64 engine{std::random_device{}()};
    return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
  };
  return timing;
}

}  // namespace trainyard::sdk
