#pragma once
// A Timing for SDK tests: time moves only by the sleeps the code under test asks for, which are
// recorded; jitter draws the top of its range, so delays are the un-jittered schedule.
#include <chrono>
#include <cstdint>
#include <vector>

#include "sdk/timing.h"

namespace trainyard::sdk {

struct FakeTiming {
  std::chrono::steady_clock::time_point now{};
  std::vector<int64_t> sleeps_ms;

  Timing Get() {
    Timing timing;
    timing.now = [this] { return now; };
    timing.sleep = [this](std::chrono::milliseconds d) {
      sleeps_ms.push_back(d.count());
      now += d;
    };
    timing.uniform01 = [] { return 1.0; };
    return timing;
  }
};

}  // namespace trainyard::sdk
