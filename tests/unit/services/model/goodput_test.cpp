#include "services/model/goodput.h"

#include <gtest/gtest.h>

#include "services/model/custom_job.h"

namespace trainyard {
namespace {

using std::chrono::seconds;

const Timestamp kT0 = FromUnixMicros(1'000'000'000);

TEST(GoodputTest, ProductiveIsRunningMinusRedoneAndLostIsRestartingPlusRedone) {
  JobGoodput g{seconds(10), seconds(20), seconds(30), seconds(140), seconds(40)};
  EXPECT_EQ(g.Productive(), seconds(100));
  EXPECT_EQ(g.Lost(), seconds(70));
  EXPECT_EQ(g.Total(), seconds(200));
  EXPECT_EQ(g.Lifetime(), seconds(190));
  EXPECT_DOUBLE_EQ(*g.Ratio(), 100.0 / 190) << "the wait before the first admission is not lost";
  EXPECT_DOUBLE_EQ(*g.SchedulingRatio(), 190.0 / 200) << "but it is the scheduler's";
  EXPECT_FALSE(JobGoodput{}.Ratio()) << "no time has passed: no ratio, not 0 and not NaN";
  EXPECT_FALSE(JobGoodput{}.SchedulingRatio());
}

TEST(GoodputTest, TheCurrentStatesTimeSoFarGoesToItsBucket) {
  const JobGoodput none{};
  EXPECT_EQ(GoodputAsOf(none, JobState::kQueued, false, kT0, kT0 + seconds(5)).waiting, seconds(5));
  EXPECT_EQ(GoodputAsOf(none, JobState::kQueued, true, kT0, kT0 + seconds(5)).restarting,
            seconds(5))
      << "back in the queue after it had started";
  EXPECT_EQ(GoodputAsOf(none, JobState::kPending, false, kT0, kT0 + seconds(5)).starting,
            seconds(5));
  EXPECT_EQ(GoodputAsOf(none, JobState::kPending, true, kT0, kT0 + seconds(5)).restarting,
            seconds(5));
  EXPECT_EQ(GoodputAsOf(none, JobState::kRunning, true, kT0, kT0 + seconds(5)).running, seconds(5));
  EXPECT_EQ(GoodputAsOf(none, JobState::kSucceeded, true, kT0, kT0 + seconds(5)).Total(),
            seconds(0))
      << "a finished job's clock has stopped";
  EXPECT_EQ(GoodputAsOf(none, JobState::kRunning, true, kT0, kT0 - seconds(5)).Total(), seconds(0))
      << "a clock behind the stored change adds nothing";
}

}  // namespace
}  // namespace trainyard
