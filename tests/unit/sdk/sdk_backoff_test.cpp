// The SDK's delay schedule: initial 1 s, ×1.5, capped, jittered downwards only.
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "sdk/backoff.h"

namespace trainyard::sdk {
namespace {

using std::chrono::milliseconds;

std::vector<int64_t> Schedule(BackoffPolicy policy, double u, int n) {
  Backoff backoff(policy, [u] { return u; });
  std::vector<int64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(backoff.Next().count());
  return out;
}

TEST(SdkBackoffTest, GrowsByOneAndAHalfFromOneSecondUpToTheCap) {
  BackoffPolicy policy;  // the defaults are the documented wait schedule
  policy.max = milliseconds(10000);
  // u = 1 draws the top of the jitter range: the un-jittered schedule.
  EXPECT_EQ(Schedule(policy, 1.0, 9),
            (std::vector<int64_t>{1000, 1500, 2250, 3375, 5063, 7594, 10000, 10000, 10000}));
}

TEST(SdkBackoffTest, JitterOnlyShortensADelayByAtMostItsFraction) {
  BackoffPolicy policy;
  policy.max = milliseconds(10000);
  policy.jitter = 0.2;
  EXPECT_EQ(Schedule(policy, 0.0, 3), (std::vector<int64_t>{800, 1200, 1800}));
  EXPECT_EQ(Schedule(policy, 0.5, 3), (std::vector<int64_t>{900, 1350, 2025}));
  // At the cap the range is [0.8 cap, cap]: never above it.
  EXPECT_EQ(Schedule(policy, 0.0, 9).back(), 8000);
}

TEST(SdkBackoffTest, NoJitterGivesTheExactSchedule) {
  BackoffPolicy policy{milliseconds(200), 2.0, milliseconds(1000), 0.0};
  EXPECT_EQ(Schedule(policy, 0.0, 5), (std::vector<int64_t>{200, 400, 800, 1000, 1000}));
}

}  // namespace
}  // namespace trainyard::sdk
