#pragma once
// The delay schedule shared by request retries and by wait(): exponential growth from an initial
// delay, a cap, and jitter so that many clients polling the same server do not move in lockstep.
#include <chrono>
#include <functional>

namespace trainyard::sdk {

struct BackoffPolicy {
  std::chrono::milliseconds initial{1000};
  double multiplier = 1.5;
  std::chrono::milliseconds max{30000};
  // Each delay is drawn uniformly from [d * (1 - jitter), d], d being the un-jittered delay, so
  // the cap is never exceeded and the mean still grows by `multiplier`.
  double jitter = 0.2;
};

class Backoff {
 public:
  // uniform01 returns a number in [0, 1); tests pass a constant to pin the schedule.
  Backoff(BackoffPolicy policy, std::function<double()> uniform01);

  // The next delay: initial, initial * m, initial * m^2, … capped at max, each jittered.
  std::chrono::milliseconds Next();

 private:
  BackoffPolicy policy_;
  std::function<double()> uniform01_;
  double current_ms_;
};

}  // namespace trainyard::sdk
