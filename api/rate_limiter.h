#pragma once
// Token buckets per key (a project's creates, or everything this process serves), so that one team
// cannot starve the API: a request over the limit is refused with 429 RESOURCE_EXHAUSTED and told
// when to come back, and did nothing. The limits are per API process.
#include <chrono>
#include <mutex>
#include <string>
#include <unordered_map>

namespace trainyard::api {

struct RateLimit {
  double per_second = 0;  // 0: unlimited
  double burst = 0;       // bucket size; 0: one second's worth (at least 1)
};

class RateLimiter {
 public:
  using Clock = std::chrono::steady_clock;

  explicit RateLimiter(RateLimit limit) : limit_(limit) {}
  bool enabled() const { return limit_.per_second > 0; }
  const RateLimit& limit() const { return limit_; }

  // Takes one token from `key`'s bucket. Zero when it had one; otherwise how long until it will,
  // and nothing is taken.
  std::chrono::microseconds Take(const std::string& key, Clock::time_point now);

 private:
  struct Bucket {
    double tokens = 0;
    Clock::time_point at{};
  };
  double Capacity() const;

  const RateLimit limit_;
  std::mutex mu_;
  // One bucket per key ever seen: projects and "everything", which are few and never go away.
  std::unordered_map<std::string, Bucket> buckets_;
};

}  // namespace trainyard::api
