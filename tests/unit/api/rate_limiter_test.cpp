// Token buckets: a burst passes, the rest waits its turn, keys do not share, and a refused request
// is told exactly when a token will be there.
#include "api/rate_limiter.h"

#include <gtest/gtest.h>

namespace trainyard::api {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

const RateLimiter::Clock::time_point kT0{};

TEST(RateLimiterTest, ABurstPassesThenTheRateHolds) {
  RateLimiter limiter({10, 20});  // 10 a second, bursts of 20
  for (int i = 0; i < 20; ++i) EXPECT_EQ(limiter.Take("team-a", kT0).count(), 0) << i;
  EXPECT_EQ(limiter.Take("team-a", kT0), microseconds(100'000));  // one token takes 100 ms
  EXPECT_EQ(limiter.Take("team-a", kT0 + milliseconds(99)).count() > 0, true);
  EXPECT_EQ(limiter.Take("team-a", kT0 + milliseconds(100)).count(), 0);
  EXPECT_GT(limiter.Take("team-a", kT0 + milliseconds(100)).count(), 0);
}

TEST(RateLimiterTest, KeysHaveTheirOwnBuckets) {
  RateLimiter limiter({1, 1});
  EXPECT_EQ(limiter.Take("team-a", kT0).count(), 0);
  EXPECT_GT(limiter.Take("team-a", kT0).count(), 0);
  EXPECT_EQ(limiter.Take("team-b", kT0).count(), 0);
}

TEST(RateLimiterTest, AnIdleBucketRefillsOnlyToItsBurst) {
  RateLimiter limiter({10, 5});
  for (int i = 0; i < 5; ++i) EXPECT_EQ(limiter.Take("k", kT0).count(), 0);
  const auto later = kT0 + std::chrono::hours(1);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(limiter.Take("k", later).count(), 0) << i;
  EXPECT_GT(limiter.Take("k", later).count(), 0);
}

TEST(RateLimiterTest, ZeroIsUnlimited) {
  RateLimiter limiter({0, 0});
  EXPECT_FALSE(limiter.enabled());
  for (int i = 0; i < 10000; ++i) ASSERT_EQ(limiter.Take("k", kT0).count(), 0);
}

}  // namespace
}  // namespace trainyard::api
