// A scenario's `scheduler` knobs reach the scheduler a replay runs: with `holdAfter` 0s and one
// hold a cycle (EASY backfilling, as many logs' machines ran), a big job at the head of the queue
// holds the nodes it needs at once, and a long job behind it no longer takes them first.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cmd/simulate/scenario.h"
#include "cmd/simulate/simulation.h"
#include "cmd/simulate/trace.h"

namespace trainyard::simulate {
namespace {

using namespace std::chrono_literals;

class SchedulerKnobsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ty-knobs-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    // Two 8-GPU nodes, no boot or pull. One queue: A (one node, 1,000 s) runs; B (both nodes)
    // waits for it; C (one node, 5,000 s) arrives behind B and fits in the free node.
    std::ofstream(dir_ / "fleet.json") << R"({"seed": 1, "bootTime": {"default": "0s"},
      "imagePullGbps": 0, "zones": [{"zone": "us-central1-a", "pools": [
      {"machineType": "a3-highgpu-8g", "model": "ON_DEMAND", "nodes": 2}]}]})";
    std::ofstream(dir_ / "t.swf") << "; Version: 2.2\n"
                                     "1  0 0 1000  8 -1 -1  8 1000 -1 1 1 1 -1 1 -1 -1 -1\n"
                                     "2 10 0 1000 16 -1 -1 16 1000 -1 1 2 1 -1 1 -1 -1 -1\n"
                                     "3 20 0 5000  8 -1 -1  8 5000 -1 1 3 1 -1 1 -1 -1 -1\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  StatusOr<Scenario> Load(const std::string& knobs) {
    std::ofstream(dir_ / "s.json") << R"({"name": "knobs", "fleet": "fleet.json",
      "workload": {"path": "t.swf", "format": "swf", "project": "queue"},
      "shapes": ["a3-highgpu-8g"], "placement": [{"model": "ON_DEMAND"}])"
                                   << knobs << "}";
    return LoadScenario((dir_ / "s.json").string(), 1);
  }

  // When each trace job started, in seconds from the replay's start.
  std::vector<int64_t> Starts(const std::string& knobs) {
    auto scenario = Load(knobs);
    EXPECT_TRUE(scenario.ok()) << scenario.status().message();
    if (!scenario.ok()) return {};
    auto trace = ReadTrace(scenario->workload);
    EXPECT_TRUE(trace.ok()) << trace.status().message();
    auto result = RunScenario(*scenario, *trace, nullptr);
    EXPECT_TRUE(result.ok()) << result.status().message();
    std::vector<int64_t> out;
    for (const JobOutcome& j : result->jobs) {
      EXPECT_TRUE(j.record->job.start_time.has_value());
      out.push_back(std::chrono::duration_cast<std::chrono::seconds>(*j.record->job.start_time -
                                                                     ReplayEpoch())
                        .count());
    }
    return out;
  }

  std::filesystem::path dir_;
};

TEST_F(SchedulerKnobsTest, EasyBackfillingKeepsALongJobFromJumpingTheHead) {
  // The server's policy: B holds only after 30 minutes, so C takes the free node at once and B
  // waits for C's 5,000 s.
  const std::vector<int64_t> server = Starts("");
  ASSERT_EQ(server.size(), 3u);
  EXPECT_LE(server[2], 30);
  EXPECT_GE(server[1], 5000);
  // EASY: B holds at once; C would end after B's planned start (A's requested end), so it waits.
  const std::vector<int64_t> easy =
      Starts(R"(, "scheduler": {"holdAfter": "0s", "holdsPerCycle": 1})");
  ASSERT_EQ(easy.size(), 3u);
  EXPECT_GE(easy[1], 1000);
  EXPECT_LT(easy[1], 1100);
  EXPECT_GE(easy[2], 2000);
}

TEST_F(SchedulerKnobsTest, ABadKnobIsRefusedByName) {
  const std::pair<const char*, const char*> cases[] = {
      {R"(, "scheduler": {"holdAfter": "soon"})", "scheduler.holdAfter"},
      {R"(, "scheduler": {"holdsPerCycle": 0})", "scheduler.holdsPerCycle"},
      {R"(, "scheduler": {"lookback": 5})", "scheduler.lookback"},
      {R"(, "scheduler": [])", "scheduler"},
      {R"(, "scheduler": {"requeueTimestamp": "Later"})", "scheduler.requeueTimestamp"},
  };
  for (const auto& [knobs, field] : cases) {
    auto s = Load(knobs);
    ASSERT_FALSE(s.ok()) << knobs;
    EXPECT_NE(s.status().message().find(field), std::string::npos) << s.status().message();
  }
  auto ok = Load(R"(, "scheduler": {"holdAfter": "600s", "holdsPerCycle": 4})");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->scheduler.reserve_min_wait, Duration(600s));
  EXPECT_EQ(ok->scheduler.max_reservations, 4);
  EXPECT_EQ(ok->scheduler.requeue_timestamp, RequeueTimestamp::kCreation);
  auto eviction = Load(R"(, "scheduler": {"requeueTimestamp": "Eviction"})");
  ASSERT_TRUE(eviction.ok()) << eviction.status().message();
  EXPECT_EQ(eviction->scheduler.requeue_timestamp, RequeueTimestamp::kEviction);
}

}  // namespace
}  // namespace trainyard::simulate
