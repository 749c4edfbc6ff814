#include "workers/runtime_backoff.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

using std::chrono::milliseconds;

TEST(RuntimeBackoffTest, EachFailureDoublesTheWaitUpToTheMostAndAnAnswerEndsIt) {
  RuntimeBackoff backoff(milliseconds(250), milliseconds(1000));
  const auto t0 = RuntimeBackoff::Clock::time_point{} + std::chrono::hours(1);
  EXPECT_FALSE(backoff.Waiting(7, t0));
  EXPECT_EQ(backoff.Failed(7, t0), milliseconds(250));
  EXPECT_TRUE(backoff.Waiting(7, t0 + milliseconds(249)));
  EXPECT_FALSE(backoff.Waiting(7, t0 + milliseconds(250)));
  EXPECT_FALSE(backoff.Waiting(8, t0)) << "per job";
  EXPECT_EQ(backoff.Failed(7, t0), milliseconds(500));
  EXPECT_EQ(backoff.Failed(7, t0), milliseconds(1000));
  EXPECT_EQ(backoff.Failed(7, t0), milliseconds(1000));
  backoff.Answered(7);
  EXPECT_FALSE(backoff.Waiting(7, t0));
  EXPECT_EQ(backoff.Failed(7, t0), milliseconds(250)) << "a new outage starts small again";
}

}  // namespace
}  // namespace trainyard
