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

// Checkpoints cost run time: a resumed run restores first, then saves after every interval of
// work; what completed saves hold is kept, the rest would be redone.
TEST(GoodputTest, ARunSplitsIntoRestoreSavesKeptWorkAndTheRest) {
  const CheckpointCost cost{seconds(10), seconds(20)};
  RunSplit fresh = SplitRun(seconds(280), /*resumed=*/false, seconds(100), cost);
  EXPECT_EQ(fresh.restore, seconds(0));
  EXPECT_EQ(fresh.saving, seconds(20)) << "saves at 100 and 210 s";
  EXPECT_EQ(fresh.kept, seconds(200));
  EXPECT_EQ(fresh.redone, seconds(60));
  RunSplit resumed = SplitRun(seconds(280), /*resumed=*/true, seconds(100), cost);
  EXPECT_EQ(resumed.restore, seconds(20));
  EXPECT_EQ(resumed.saving, seconds(20));
  EXPECT_EQ(resumed.kept, seconds(200));
  EXPECT_EQ(resumed.redone, seconds(40));
  RunSplit cut = SplitRun(seconds(15), /*resumed=*/true, seconds(100), cost);
  EXPECT_EQ(cut.restore, seconds(15)) << "stopped while restoring";
  EXPECT_EQ(cut.redone, seconds(0));
  RunSplit never = SplitRun(seconds(280), /*resumed=*/false, seconds(0), cost);
  EXPECT_EQ(never.saving, seconds(0)) << "a job that never checkpoints never saves";
  EXPECT_EQ(never.redone, seconds(280));

  JobGoodput g;
  g.running = seconds(730);
  g.redone = seconds(60);
  g.checkpoint_save = seconds(50);
  g.checkpoint_restore = seconds(20);
  EXPECT_EQ(g.Productive(), seconds(600)) << "saves and restores are not productive";
}

// Every run starts with the program's start-up (NCCL or jax.distributed initialization), before
// any restore or work: RUNNING time that trains nothing.
TEST(GoodputTest, EveryRunFirstPaysItsProgramStartup) {
  const CheckpointCost cost{seconds(10), seconds(20)};
  RunSplit run = SplitRun(seconds(330), /*resumed=*/true, seconds(100), cost, seconds(50));
  EXPECT_EQ(run.program_startup, seconds(50));
  EXPECT_EQ(run.restore, seconds(20));
  EXPECT_EQ(run.saving, seconds(20));
  EXPECT_EQ(run.kept, seconds(200));
  EXPECT_EQ(run.redone, seconds(40)) << "the 280 s after the start-up split as before";
  RunSplit cut = SplitRun(seconds(30), /*resumed=*/true, seconds(100), cost, seconds(50));
  EXPECT_EQ(cut.program_startup, seconds(30)) << "stopped before its first step";
  EXPECT_EQ(cut.restore, seconds(0));
  EXPECT_EQ(cut.redone, seconds(0));

  JobGoodput g;
  g.running = seconds(780);
  g.redone = seconds(60);
  g.checkpoint_save = seconds(50);
  g.checkpoint_restore = seconds(20);
  g.program_startup = seconds(50);
  EXPECT_EQ(g.Productive(), seconds(600)) << "the program's start-up is not productive";
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
