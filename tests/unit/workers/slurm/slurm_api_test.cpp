#include "workers/slurm/slurm_api.h"

#include <gtest/gtest.h>

namespace trainyard::slurm {
namespace {

TEST(SlurmApiTest, AJobHasEndedOnlyInAStateSlurmLeavesForGood) {
  for (const char* state : {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED",
                            "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE"}) {
    EXPECT_TRUE(SlurmJobEnded(state)) << state;
  }
  for (const char* state : {"PENDING", "RUNNING", "COMPLETING", "SUSPENDED", ""}) {
    EXPECT_FALSE(SlurmJobEnded(state)) << state;
  }
}

TEST(SlurmApiTest, ANodeRunsJobsWhenUpAndNeitherDrainedNorUnreachable) {
  EXPECT_TRUE(SlurmNodeUsable(SlurmNode{"a", "idle", {}, {"gpu"}}));
  EXPECT_TRUE(SlurmNodeUsable(SlurmNode{"a", "ALLOCATED", {}, {"gpu"}})) << "busy is still there";
  EXPECT_FALSE(SlurmNodeUsable(SlurmNode{"d", "IDLE+DRAIN", {}, {"gpu"}})) << "22.05 folds flags";
  EXPECT_FALSE(SlurmNodeUsable(SlurmNode{"d", "idle", {"DRAINING"}, {"gpu"}}));
  EXPECT_FALSE(SlurmNodeUsable(SlurmNode{"n", "mixed", {"NOT_RESPONDING"}, {"gpu"}}));
  EXPECT_FALSE(SlurmNodeUsable(SlurmNode{"x", "down", {}, {"gpu"}}));
  EXPECT_FALSE(SlurmNodeUsable(SlurmNode{"f", "future", {}, {"gpu"}}));
}

}  // namespace
}  // namespace trainyard::slurm
