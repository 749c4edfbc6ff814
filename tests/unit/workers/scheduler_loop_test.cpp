// The scheduler loop over the memory stores, as `simulate` runs it: what it keeps of each job
// between the change feed's rows.
#include "workers/scheduler_loop.h"

#include <gtest/gtest.h>

#include "tests/unit/memory_plane.h"

namespace trainyard {
namespace {

// Two warm reserved A3 Mega nodes: a 2-node gang takes both.
constexpr const char* kFleet = R"({"zones": [{"zone": "us-central1-a", "pools": [
  {"machineType": "a3-megagpu-8g", "model": "RESERVATION", "reservation": "r1", "term": "1y",
   "keepBooted": true, "nodes": 2, "pricePerNodeHour": 36}]}]})";

class SchedulerLoopFeedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status started = world_.Start(kFleet, "scheduler-loop-test");
    ASSERT_TRUE(started.ok()) << started.message();
  }

  CustomJob CreateGang() {
    CustomJob job;
    job.display_name = "gang";
    const WorkerPoolSpec pool = testing::A3MegaReplica("3600s");
    job.job_spec.worker_pool_specs = {pool, pool};  // the primary replica and one worker
    auto created = world_.plane->jobs().Create(ParentRef{"demo", "us-central1"}, job, "");
    EXPECT_TRUE(created.ok()) << created.status().message();
    return created.ok() ? *created : CustomJob{};
  }

  testing::MemoryPlane world_;
};

// The feed carries a spec only while its job is queued (a spec never changes); the loop places
// the job's later rows with the shape it made from that one, so the gang keeps both nodes and the
// next one waits.
TEST_F(SchedulerLoopFeedTest, AJobPastTheQueueKeepsTheShapeItsQueuedRowGave) {
  CreateGang();
  auto pass = world_.plane->scheduler().RunOnce();
  ASSERT_TRUE(pass.ok()) << pass.status().message();
  ASSERT_EQ(pass->committed.admitted, 1);

  auto feed = world_.memory.ports().scheduler->JobChanges(ChangeCursor{}, 10);
  ASSERT_TRUE(feed.ok()) << feed.status().message();
  ASSERT_EQ(feed->size(), 1u);
  EXPECT_EQ(feed->front().job.state, JobState::kPending);
  EXPECT_TRUE(feed->front().without_spec);
  EXPECT_TRUE(feed->front().job.job_spec.worker_pool_specs.empty());

  CreateGang();
  pass = world_.plane->scheduler().RunOnce();
  ASSERT_TRUE(pass.ok()) << pass.status().message();
  EXPECT_EQ(pass->committed.admitted, 0) << "the running gang still holds both nodes";
  EXPECT_EQ(world_.plane->scheduler().core().running_count(), 1);
  EXPECT_EQ(world_.plane->scheduler().core().pending_count(), 1);
}

// A row past the queue for a job this loop never saw queued (a second loop on the same store,
// which memory lets lead beside the first) fails the pass, and the next one reads every live job
// whole: nothing is placed without its shape.
TEST_F(SchedulerLoopFeedTest, ARowPastTheQueueWithNoShapeKeptMakesTheNextPassReload) {
  SchedulerLoop other(*world_.memory.ports().scheduler, world_.fleet, world_.clock);
  auto first = other.RunOnce();
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->reloaded, 0);

  CreateGang();
  auto admitted = world_.plane->scheduler().RunOnce();
  ASSERT_TRUE(admitted.ok()) << admitted.status().message();
  ASSERT_EQ(admitted->committed.admitted, 1);

  auto unknown = other.RunOnce();
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), Code::kAborted) << unknown.status().message();
  auto reloaded = other.RunOnce();
  ASSERT_TRUE(reloaded.ok()) << reloaded.status().message();
  EXPECT_EQ(reloaded->reloaded, 1);
  EXPECT_EQ(other.core().running_count(), 1) << "placed from the spec the reload read";
}

}  // namespace
}  // namespace trainyard
