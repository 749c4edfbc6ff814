// A replay of a log held against the log: the recorded figures come from the trace (its waits,
// run times and machine size), the replay's from what the control plane did, side by side.
#include "cmd/simulate/validation.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cmd/simulate/scenario.h"

namespace trainyard::simulate {
namespace {

TEST(ValidationTest, CorrelationIsPearsons) {
  EXPECT_NEAR(*Correlation({1, 2, 3, 4}, {2, 4, 6, 8}), 1.0, 1e-9);
  EXPECT_NEAR(*Correlation({1, 2, 3, 4}, {8, 6, 4, 2}), -1.0, 1e-9);
  EXPECT_FALSE(Correlation({1, 1, 1}, {1, 2, 3}).has_value()) << "no variance";
  EXPECT_FALSE(Correlation({1}, {1}).has_value());
}

// A two-node machine (MaxProcs 4, two processors a node): job 2 waited 100 s for job 1 on the
// real machine and must wait as long in the replay; job 3 ran at once in both.
const char* kLog =
    "; Version: 2.2\n; MaxNodes: 2\n; MaxProcs: 4\n"
    "1   0   0 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n"
    "2   0 100 100 4 -1 -1 4 200 -1 1 2 1 -1 1 -1 -1 -1\n"
    "3 400   0  50 2 -1 -1 2 100 -1 1 3 1 -1 1 -1 -1 -1\n";

TEST(ValidationTest, AReplayOnTheLogsMachineIsComparedFigureByFigure) {
  const std::string dir =
      std::filesystem::temp_directory_path() / ("ty-validation-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/log.swf") << kLog;
  std::ofstream(dir + "/s.json") << R"({"name": "recorded", "fleet": {"seed": 1,
    "bootTime": {"default": "0s"}, "imagePullGbps": 0, "zones": [{"zone": "us-central1-a",
    "pools": [{"machineType": "a3-highgpu-2g", "model": "ON_DEMAND", "nodes": 2}]}]},
    "workload": {"path": "log.swf", "format": "swf"}, "shapes": ["a3-highgpu-2g"],
    "placement": [{"model": "ON_DEMAND"}]})";
  auto scenario = LoadScenario(dir + "/s.json", 1);
  ASSERT_TRUE(scenario.ok()) << scenario.status().message();
  auto trace = ReadTrace(scenario->workload);
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  EXPECT_EQ(trace->max_procs, 4);
  auto result = RunScenario(*scenario, *trace, nullptr);
  ASSERT_TRUE(result.ok()) << result.status().message();
  auto v = ValidationOf(*trace, *result);
  ASSERT_TRUE(v.has_value());
  // Work 4×100 + 4×100 + 2×50 = 900 processor-seconds over 450 s on 4 processors.
  EXPECT_NEAR((*v)["recorded"]["utilization"].get<double>(), 0.5, 1e-3);
  EXPECT_NEAR((*v)["recorded"]["wait_mean_s"].get<double>(), 33.3, 0.1);
  // Bounded slowdown: (1 + 2 + 1) / 3.
  EXPECT_NEAR((*v)["recorded"]["bounded_slowdown"].get<double>(), 1.33, 0.01);
  EXPECT_NEAR((*v)["replay"]["wait_mean_s"].get<double>(), 33.3, 1) << v->dump();
  EXPECT_NEAR((*v)["replay"]["utilization"].get<double>(), 0.5, 0.01) << v->dump();
  std::filesystem::remove_all(dir);
}

TEST(ValidationTest, ATraceWithoutRecordedWaitsHasNoValidation) {
  Trace trace;
  trace.max_procs = 4;
  SimulationResult result;
  TraceJob job;
  JobOutcome outcome;
  outcome.trace = &job;
  result.jobs.push_back(outcome);
  EXPECT_FALSE(ValidationOf(trace, result).has_value());
}

}  // namespace
}  // namespace trainyard::simulate
