// A replay wakes between events only when something time-driven may be decided
// (RunScenario's ReplayWakes): it runs far fewer passes than one that wakes every minute, and
// every job's history is the same, including the decisions the clock alone brings (a waiting job
// holding capacity once it has waited holdAfter, a job no longer passing another's hold).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "api/wire/custom_job_codec.h"
#include "cmd/simulate/scenario.h"
#include "cmd/simulate/simulation.h"
#include "cmd/simulate/trace.h"

namespace trainyard::simulate {
namespace {

using namespace std::chrono_literals;

class ReplayWakesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ty-wakes-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    // Two 8-GPU nodes, no boot or pull. A (one node, 10,000 s) runs; B (both nodes) waits for it
    // and may hold them after holdAfter (30 minutes); C (one node) takes the other node at once;
    // N (three nodes) never fits; D arrives after C ended and runs before B's hold starts.
    std::ofstream(dir_ / "fleet.json") << R"({"seed": 1, "bootTime": {"default": "0s"},
      "imagePullGbps": 0, "neverFitsTimeout": "3600s", "zones": [{"zone": "us-central1-a", "pools": [
      {"machineType": "a3-highgpu-8g", "model": "ON_DEMAND", "nodes": 2}]}]})";
    std::ofstream(dir_ / "t.swf") << "; Version: 2.2\n"
                                     "1    0 0 10000  8 -1 -1  8 10000 -1 1 1 1 -1 1 -1 -1 -1\n"
                                     "2   10 0  1000 16 -1 -1 16  1000 -1 1 2 1 -1 1 -1 -1 -1\n"
                                     "3   20 0  5000  8 -1 -1  8  5000 -1 1 3 1 -1 1 -1 -1 -1\n"
                                     "4   30 0   100 24 -1 -1 24   100 -1 1 4 1 -1 1 -1 -1 -1\n"
                                     "5 6000 0  2000  8 -1 -1  8  2000 -1 1 5 1 -1 1 -1 -1 -1\n";
    std::ofstream(dir_ / "s.json") << R"({"name": "wakes", "fleet": "fleet.json",
      "workload": {"path": "t.swf", "format": "swf", "project": "queue"},
      "shapes": ["a3-highgpu-8g"], "placement": [{"model": "ON_DEMAND"}]})";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  StatusOr<SimulationResult> Run(ReplayWakes wakes, const std::string& file = "s.json") {
    auto scenario = LoadScenario((dir_ / file).string(), 1);
    if (!scenario.ok()) return scenario.status();
    auto trace = ReadTrace(scenario->workload);
    if (!trace.ok()) return trace.status();
    trace_ = std::move(*trace);
    return RunScenario(*scenario, trace_, nullptr, wakes);
  }

  // Each job as a client reads it (state, times, reason, placement), with the row's version (one
  // more for every write, a verdict's too) and its cost.
  static std::vector<std::string> Histories(const SimulationResult& result) {
    std::vector<std::string> out;
    for (const JobOutcome& j : result.jobs) {
      out.push_back(EncodeCustomJob(j.record->job).dump() + " version " +
                    std::to_string(j.record->version) + " cost " +
                    std::to_string(j.record->cost_micros));
    }
    return out;
  }

  std::filesystem::path dir_;
  Trace trace_;
};

TEST_F(ReplayWakesTest, SkipsIdleMinutesYetDecidesAsAPassEveryMinute) {
  auto every = Run(ReplayWakes::kEveryMinute);
  ASSERT_TRUE(every.ok()) << every.status().message();
  const std::vector<std::string> expected = Histories(*every);
  const int64_t every_passes = every->passes;
  auto when_due = Run(ReplayWakes::kWhenDecisionsMayChange);
  ASSERT_TRUE(when_due.ok()) << when_due.status().message();

  EXPECT_EQ(Histories(*when_due), expected);
  EXPECT_EQ(when_due->simulated, every->simulated);
  EXPECT_EQ(when_due->unsettled_events, 0);
  // About 11,000 s of live jobs: some 180 minute passes, of which a handful may decide anything.
  EXPECT_GT(every_passes, 150);
  EXPECT_LT(when_due->passes * 4, every_passes);

  // The clock's own decision was taken: B, held for from the minute it had waited holdAfter,
  // ran when A ended, and D ran before then in C's node.
  ASSERT_EQ(when_due->jobs.size(), 5u);
  const CustomJob& b = when_due->jobs[1].record->job;
  ASSERT_TRUE(b.start_time.has_value());
  EXPECT_GE(*b.start_time - ReplayEpoch(), 10000s);
  EXPECT_LT(*b.start_time - ReplayEpoch(), 10100s);
  // D ran in C's node before B's hold (A's end) came.
  const CustomJob& d = when_due->jobs[4].record->job;
  ASSERT_TRUE(d.start_time.has_value());
  EXPECT_LT(*d.start_time - ReplayEpoch(), 6100s);
}

// A job passes another's hold only while it would end before the hold starts; when the clock
// takes that away, its own hold goes and a job behind it may start, with no event to wake for.
TEST_F(ReplayWakesTest, WakesWhenAJobStopsPassingAHold) {
  // Three nodes. A (one node, 10,000 s) and A2 (one node, 5,000 s) run. H (three nodes) holds all
  // three from A's end. W (two nodes, 6,000 s) ends before then while now <= 4,000 s, so passes
  // H's hold and holds A2's node and the free one from 5,000 s. X (one node, 3,000 s, from 2,500
  // s) would end after 5,000 s: W's hold keeps it out, until W stops passing H's hold (just after
  // 4,000 s) and with it holds nothing; X then ends before H's start and takes the free node.
  std::ofstream(dir_ / "fleet3.json") << R"({"seed": 1, "bootTime": {"default": "0s"},
    "imagePullGbps": 0, "zones": [{"zone": "us-central1-a", "pools": [
    {"machineType": "a3-highgpu-8g", "model": "ON_DEMAND", "nodes": 3}]}]})";
  std::ofstream(dir_ / "hold.swf") << "; Version: 2.2\n"
                                      "1    0 0 10000  8 -1 -1  8 10000 -1 1 1 1 -1 1 -1 -1 -1\n"
                                      "2    0 0  5000  8 -1 -1  8  5000 -1 1 2 1 -1 1 -1 -1 -1\n"
                                      "3   10 0   100 24 -1 -1 24   100 -1 1 3 1 -1 1 -1 -1 -1\n"
                                      "4   20 0  6000 16 -1 -1 16  6000 -1 1 4 1 -1 1 -1 -1 -1\n"
                                      "5 2500 0  3000  8 -1 -1  8  3000 -1 1 5 1 -1 1 -1 -1 -1\n";
  std::ofstream(dir_ / "hold.json") << R"({"name": "hold", "fleet": "fleet3.json",
    "workload": {"path": "hold.swf", "format": "swf", "project": "queue"},
    "shapes": ["a3-highgpu-8g"], "placement": [{"model": "ON_DEMAND"}]})";
  auto every = Run(ReplayWakes::kEveryMinute, "hold.json");
  ASSERT_TRUE(every.ok()) << every.status().message();
  auto when_due = Run(ReplayWakes::kWhenDecisionsMayChange, "hold.json");
  ASSERT_TRUE(when_due.ok()) << when_due.status().message();

  EXPECT_EQ(Histories(*when_due), Histories(*every));
  // X started at the first minute pass after 4,000 s (4,060 s on its cadence), well before any
  // event (A2's end at 5,000 s, X reaching holdAfter at 4,300 s).
  ASSERT_EQ(when_due->jobs.size(), 5u);
  const CustomJob& x = when_due->jobs[4].record->job;
  ASSERT_TRUE(x.start_time.has_value());
  EXPECT_GT(*x.start_time - ReplayEpoch(), 4000s);
  EXPECT_LT(*x.start_time - ReplayEpoch(), 4100s);
}

}  // namespace
}  // namespace trainyard::simulate
