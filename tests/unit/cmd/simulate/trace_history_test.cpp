// Traces replayed as they happened: a job the trace records as failed or cancelled ends FAILED or
// CANCELLED at its recorded run time (not as a full-length success), the user's requested time is
// the job's limit, durations can be scaled, and any project value loads.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cmd/simulate/job_builder.h"
#include "cmd/simulate/scenario.h"
#include "cmd/simulate/simulation.h"
#include "cmd/simulate/trace.h"

namespace trainyard::simulate {
namespace {

using namespace std::chrono_literals;

std::string Write(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("ty-history-" + std::to_string(getpid()) + "-" + name);
  std::ofstream(path) << text;
  return path.string();
}

// SWF lines: id submit wait run procs cpu mem req_procs req_time mem status user group exe queue
// partition preceding think.
const char* kSwf =
    "; Version: 2.2\n"
    "1   0 0 3600 8 -1 -1 8 7200 -1 1 1 1 -1 1 -1 -1 -1\n"   // completed
    "2  10 0 1800 8 -1 -1 8 7200 -1 0 2 1 -1 1 -1 -1 -1\n"   // failed
    "3  20 0  900 8 -1 -1 8 3600 -1 5 3 1 -1 1 -1 -1 -1\n"   // cancelled
    "4  30 0  600 8 -1 -1 8   -1 -1 1 4 1 -1 1 -1 -1 -1\n";  // no requested time

TEST(TraceHistoryTest, SwfStatusAndRequestedTimeAreRead) {
  Workload w;
  w.format = TraceFormat::kSwf;
  w.path = Write("status.swf", kSwf);
  auto trace = ReadTrace(w);
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  ASSERT_EQ(trace->jobs.size(), 4u);
  EXPECT_EQ(trace->jobs[0].end, TraceEnd::kCompleted);
  EXPECT_EQ(trace->jobs[1].end, TraceEnd::kFailed);
  EXPECT_EQ(trace->jobs[2].end, TraceEnd::kCancelled);
  EXPECT_EQ(trace->jobs[0].requested, Duration(7200s));
  EXPECT_EQ(trace->jobs[2].requested, Duration(3600s));
  EXPECT_FALSE(trace->jobs[3].requested.has_value());
}

TEST(TraceHistoryTest, CsvStatusAndLimitColumnsAndADurationScaleAreRead) {
  Workload w;
  w.format = TraceFormat::kCsv;
  w.columns = {"submit", "duration", "gpus", "", "vc", "status", "limit"};
  w.duration_scale = 0.5;
  w.path = Write("status.csv",
                 "submit,duration,gpus,vc,status,limit\n"
                 "0,100,1,6214e9,Pass,400\n"
                 "1,100,1,6214e9,Failed,400\n"
                 "2,100,1,6214e9,Killed,\n"
                 "3,100,1,6214e9,TIMEOUT,100\n");
  auto trace = ReadTrace(w);
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  ASSERT_EQ(trace->jobs.size(), 4u);
  EXPECT_EQ(trace->jobs[0].end, TraceEnd::kCompleted);
  EXPECT_EQ(trace->jobs[1].end, TraceEnd::kFailed);
  EXPECT_EQ(trace->jobs[2].end, TraceEnd::kCancelled);
  EXPECT_EQ(trace->jobs[3].end, TraceEnd::kFailed) << "a timeout counts as failed";
  EXPECT_EQ(trace->jobs[0].duration, Duration(50s)) << "scaled";
  EXPECT_EQ(trace->jobs[0].requested, Duration(200s)) << "scaled";
  EXPECT_FALSE(trace->jobs[2].requested.has_value());
  EXPECT_EQ(trace->jobs[0].project, "6214e9") << "the trace's own value, for the reports";
}

TEST(TraceHistoryTest, AnyProjectValueBecomesAValidProjectId) {
  EXPECT_EQ(ProjectIdOf("team-a"), "team-a") << "a valid id stays";
  EXPECT_EQ(ProjectIdOf("6214e9"), "p-6214e9") << "Philly's virtual clusters start with a digit";
  EXPECT_EQ(ProjectIdOf("vc B/1"), "p-vc-B-1");
  EXPECT_EQ(ProjectIdOf(std::string(100, 'x')).size(), 63u);
}

// A fleet with room for every job at once, no boot or pull, no failures: what a replay changes is
// then only what the trace says.
const char* kFleet = R"({"seed": 1, "bootTime": {"default": "0s"}, "imagePullGbps": 0,
  "zones": [{"zone": "us-central1-a", "pools": [
    {"machineType": "a3-highgpu-8g", "model": "ON_DEMAND", "nodes": 8}]}]})";

TEST(TraceHistoryTest, AReplayEndsFailedAndCancelledJobsAtTheirRecordedRunTime) {
  const std::string dir =
      std::filesystem::temp_directory_path() / ("ty-history-replay-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/fleet.json") << kFleet;
  std::ofstream(dir + "/t.swf") << kSwf;
  std::ofstream(dir + "/s.json") << R"({"name": "history", "fleet": "fleet.json",
    "workload": {"path": "t.swf", "format": "swf"}, "shapes": ["a3-highgpu-8g"],
    "placement": [{"model": "ON_DEMAND"}]})";
  auto scenario = LoadScenario(dir + "/s.json", 1);
  ASSERT_TRUE(scenario.ok()) << scenario.status().message();
  auto trace = ReadTrace(scenario->workload);
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  auto result = RunScenario(*scenario, *trace, nullptr);
  ASSERT_TRUE(result.ok()) << result.status().message();
  ASSERT_EQ(result->jobs.size(), 4u);
  const JobState want[] = {JobState::kSucceeded, JobState::kFailed, JobState::kCancelled,
                           JobState::kSucceeded};
  for (size_t i = 0; i < 4; ++i) {
    const CustomJob& job = result->jobs[i].record->job;
    EXPECT_EQ(job.state, want[i]) << "trace line " << result->jobs[i].trace->line;
    ASSERT_TRUE(job.start_time && job.end_time) << i;
    EXPECT_EQ(std::chrono::duration_cast<std::chrono::seconds>(*job.end_time - *job.start_time),
              std::chrono::duration_cast<std::chrono::seconds>(result->jobs[i].trace->duration))
        << "trace line " << result->jobs[i].trace->line << " ends at its recorded run time";
  }
  // The requested time is the limit backfill plans with.
  const auto& sched = result->jobs[0].record->job.job_spec.scheduling;
  ASSERT_TRUE(sched.has_value());
  EXPECT_EQ(sched->timeout, Duration(7200s));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace trainyard::simulate
