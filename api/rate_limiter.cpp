#include "api/rate_limiter.h"

#include <algorithm>
#include <cmath>

namespace trainyard::api {

double RateLimiter::Capacity() const {
  return limit_.burst > 0 ? limit_.burst : std::max(1.0, limit_.per_second);
}

std::chrono::microseconds RateLimiter::Take(const std::string& key, Clock::time_point now) {
  if (!enabled()) return std::chrono::microseconds::zero();
  std::lock_guard lock(mu_);
  auto [it, fresh] = buckets_.try_emplace(key, Bucket{Capacity(), now});
  Bucket& b = it->second;
  if (!fresh && now > b.at) {
    const double elapsed = std::chrono::duration<double>(now - b.at).count();
    b.tokens = std::min(Capacity(), b.tokens + elapsed * limit_.per_second);
    b.at = now;
  }
  if (b.tokens >= 1) {
    b.tokens -= 1;
    return std::chrono::microseconds::zero();
  }
  const double wait_s = (1 - b.tokens) / limit_.per_second;
  return std::chrono::microseconds(static_cast<int64_t>(std::ceil(wait_s * 1e6)));
}

}  // namespace trainyard::api
