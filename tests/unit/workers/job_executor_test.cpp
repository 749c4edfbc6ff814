// The runtime loop over the memory stores and the sim runtime, as `simulate` runs it: when it
// writes a start, and what a run that ends before the next look leaves behind.
#include "workers/job_executor.h"

#include <gtest/gtest.h>

#include "tests/unit/memory_plane.h"

namespace trainyard {
namespace {

using namespace std::chrono_literals;

// One warm reserved A3 Mega node: a job starts on it without a boot.
constexpr const char* kFleet = R"({"zones": [{"zone": "us-central1-a", "pools": [
  {"machineType": "a3-megagpu-8g", "model": "RESERVATION", "reservation": "r1", "term": "1y",
   "keepBooted": true, "nodes": 1, "pricePerNodeHour": 36}]}]})";

const ParentRef kDemo{"demo", "us-central1"};

class JobExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    app::ControlPlaneOptions options;
    // The manual clock's wall time is its own: a run shorter than 10 minutes ends within a tick.
    options.executor.idle_tick = std::chrono::minutes(10);
    Status started = world_.Start(kFleet, "job-executor-test", options);
    ASSERT_TRUE(started.ok()) << started.message();
  }

  // A one-node job of `duration` ("60s"), with `env` besides, admitted.
  JobRef CreateAdmitted(const std::string& duration, std::vector<EnvVar> env = {}) {
    CustomJob job;
    job.display_name = "short";
    job.job_spec.worker_pool_specs = {testing::A3MegaReplica(duration, std::move(env))};
    auto created = world_.plane->jobs().Create(kDemo, job, "");
    EXPECT_TRUE(created.ok()) << created.status().message();
    auto pass = world_.plane->scheduler().RunOnce();
    EXPECT_TRUE(pass.ok() && pass->committed.admitted == 1);
    const std::string name = created.ok() ? created->name : "";
    return JobRef{kDemo, name.substr(name.rfind('/') + 1)};
  }

  CustomJob Read(const JobRef& ref) {
    auto job = world_.plane->jobs().Get(ref);
    EXPECT_TRUE(job.ok()) << job.status().message();
    return job.ok() ? *job : CustomJob{};
  }

  // On to when the admission says the job's replicas may start (its image pulled).
  Duration AdvanceToStart(const JobRef& ref) {
    const CustomJob admitted = Read(ref);
    EXPECT_EQ(admitted.state, JobState::kPending);
    const Duration startup = admitted.trainyard ? admitted.trainyard->startup : Duration{};
    world_.clock.Advance(std::chrono::duration_cast<std::chrono::microseconds>(startup));
    return startup;
  }

  int Pass() {
    auto applied = world_.plane->executor().RunOnce();
    EXPECT_TRUE(applied.ok()) << applied.status().message();
    return applied.ok() ? *applied : -1;
  }

  testing::MemoryPlane world_;
};

// A run that succeeds within one tick is not written RUNNING when it starts: the pass that sees its
// end writes both, and the job shows the start it had.
TEST_F(JobExecutorTest, ARunThatEndsWithinATickIsWrittenOnceWithItsStart) {
  const JobRef ref = CreateAdmitted("60s");
  const Duration startup = AdvanceToStart(ref);
  const Timestamp launched_at = world_.clock.Now();

  EXPECT_EQ(Pass(), 0) << "the start waits for its end";
  CustomJob held = Read(ref);
  EXPECT_EQ(held.state, JobState::kPending);
  EXPECT_FALSE(held.start_time);

  world_.clock.Advance(30s);
  EXPECT_EQ(Pass(), 0) << "still running, still within a tick of its end";
  EXPECT_EQ(Read(ref).state, JobState::kPending);

  world_.clock.Advance(10min);
  EXPECT_EQ(Pass(), 1);
  const CustomJob done = Read(ref);
  EXPECT_EQ(done.state, JobState::kSucceeded);
  ASSERT_TRUE(done.start_time);
  EXPECT_EQ(*done.start_time, launched_at) << "it started once its image was pulled";
  ASSERT_TRUE(done.end_time);
  ASSERT_TRUE(done.trainyard);
  EXPECT_GE(done.trainyard->goodput.running, 60s) << "its run counted as running";
  EXPECT_EQ(done.trainyard->goodput.starting, startup) << "PENDING until then";
}

// A run longer than a tick is written RUNNING when it starts, as before.
TEST_F(JobExecutorTest, ARunLongerThanATickIsWrittenRunningWhenItStarts) {
  const JobRef ref = CreateAdmitted("3600s");
  AdvanceToStart(ref);
  EXPECT_EQ(Pass(), 1);
  EXPECT_EQ(Read(ref).state, JobState::kRunning);
}

// A job whose run fails is written RUNNING at its start: only a run the runtime says succeeds
// waits for its end.
TEST_F(JobExecutorTest, ARunThatWillFailIsWrittenRunningWhenItStarts) {
  const JobRef ref = CreateAdmitted("60s", {{"TRAINYARD_SIM_EXIT_CODE", "1"}});
  AdvanceToStart(ref);
  EXPECT_EQ(Pass(), 1);
  EXPECT_EQ(Read(ref).state, JobState::kRunning);
}

}  // namespace
}  // namespace trainyard
