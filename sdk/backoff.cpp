#include "sdk/backoff.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace trainyard::sdk {

Backoff::Backoff(BackoffPolicy policy, std::function<double()> uniform01)
    : policy_(policy),
      uniform01_(std::move(uniform01)),
      current_ms_(static_cast<double>(policy.initial.count())) {}

std::chrono::milliseconds Backoff::Next() {
  const double cap = static_cast<double>(policy_.max.count());
  const double base = std::min(current_ms_, cap);
  current_ms_ = std::min(current_ms_ * policy_.multiplier, cap);
  const double jitter = std::clamp(policy_.jitter, 0.0, 1.0);
  const double u = std::clamp(uniform01_(), 0.0, 1.0);
  const double delay = base * (1.0 - jitter * (1.0 - u));
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(delay)));
}

}  // namespace trainyard::sdk
