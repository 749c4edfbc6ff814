// Traces as they are published (SWF v2.2, mapped CSV, JSONL), and the jobs a scenario makes of
// them: the shape GPU counts map to and the consumption model the placement rules give.
#include "cmd/simulate/trace.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "cmd/simulate/job_builder.h"

namespace trainyard::simulate {
namespace {

using namespace std::chrono_literals;

// The files the tests write, removed when the test binary exits.
struct TempFiles {
  std::vector<std::filesystem::path> paths;
  ~TempFiles() {
    std::error_code ec;
    for (const auto& p : paths) std::filesystem::remove(p, ec);
  }
};
TempFiles temp_files;

std::string Write(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("ty-trace-" + std::to_string(getpid()) + "-" + name);
  std::ofstream(path) << text;
  temp_files.paths.push_back(path);
  return path.string();
}

// A trace job that ran to its end: line, run time, GPUs, nodes (0: the shape decides), project.
TraceJob Job(int64_t line, Duration duration, int64_t gpus, int64_t nodes, std::string project) {
  TraceJob job;
  job.line = line;
  job.duration = duration;
  job.gpus = gpus;
  job.nodes = nodes;
  job.project = std::move(project);
  return job;
}

TEST(TraceTest, SwfJobsKeepTheirSubmitRunTimeProcessorsAndProjectAndSkipThoseThatNeverRan) {
  Workload w;
  w.format = TraceFormat::kSwf;
  w.path = Write("a.swf",
                 "; Version: 2.2\n; Computer: test\n"
                 "1 100 5 3600 8 -1 -1 8 7200 -1 1 3 1 -1 1 -1 -1 -1\n"
                 "2  40 0 -1   4 -1 -1 4 7200 -1 5 4 1 -1 1 -1 -1 -1\n"  // cancelled: no run time
                 "3 160 9 60   -1 -1 -1 16 600 -1 1 4 2 -1 2 -1 -1 -1\n");
  auto trace = ReadTrace(w);
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  ASSERT_EQ(trace->jobs.size(), 2u);
  EXPECT_EQ(trace->skipped, 1);
  EXPECT_EQ(trace->jobs[0].line, 3);
  EXPECT_EQ(trace->jobs[0].submit, Duration{});  // from the first submit
  EXPECT_EQ(trace->jobs[0].duration, Duration(3600s));
  EXPECT_EQ(trace->jobs[0].gpus, 8);
  EXPECT_EQ(trace->jobs[0].project, "user-3");
  EXPECT_EQ(trace->jobs[1].submit, Duration(60s));
  EXPECT_EQ(trace->jobs[1].gpus, 16) << "requested processors when none are recorded as allocated";

  w.path = Write("short.swf", "1 100 5 3600 8\n");
  auto bad = ReadTrace(w);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("short.swf:1: an SWF job line has 18 fields, this one 5"),
            std::string::npos)
      << bad.status().message();
}

TEST(TraceTest, CsvColumnsAreMappedAndTimestampsAreRead) {
  Workload w;
  w.format = TraceFormat::kCsv;
  w.columns = {"submit_time", "duration", "gpu_num", "node_num", "vc", "", ""};
  w.submit_is_timestamp = true;
  w.path = Write("helios.csv",
                 "job_id,vc,gpu_num,node_num,submit_time,duration\n"
                 "a,vcA,16,2,2020-03-01 00:10:00,600\n"
                 "b,\"vc,B\",1,1,2020-03-01 00:00:07,30.5\n"
                 "c,vcA,0,1,2020-03-01 00:20:00,60\n");  // a CPU job: skipped
  auto trace = ReadTrace(w);
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  ASSERT_EQ(trace->jobs.size(), 2u);
  EXPECT_EQ(trace->skipped, 1);
  EXPECT_EQ(trace->jobs[0].project, "vc,B");
  EXPECT_EQ(trace->jobs[1].submit, Duration(593s));
  EXPECT_EQ(trace->jobs[1].nodes, 2);
  EXPECT_EQ(trace->jobs[0].duration, Duration(30500ms));

  w.path =
      Write("bad.csv", "job_id,vc,gpu_num,node_num,submit_time,duration\na,v,1,1,yesterday,6\n");
  auto bad = ReadTrace(w);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bad.csv:2: column \"submit_time\" is not a timestamp"),
            std::string::npos)
      << bad.status().message();
}

TEST(TraceTest, JsonlJobsAreCustomJobBodiesSentAsTheyAre) {
  Workload w;
  w.format = TraceFormat::kJsonl;
  w.path = Write(
      "jobs.jsonl",
      R"({"submitOffset": "60s", "project": "demo", "job": {"displayName": "x", "jobSpec": {"workerPoolSpecs": [{"machineSpec": {"machineType": "a3-megagpu-8g"}, "replicaCount": "2", "containerSpec": {"imageUri": "i"}}]}}})"
      "\n"
      R"({"submitOffset": "soon", "job": {}})"
      "\n");
  auto trace = ReadTrace(w);
  ASSERT_FALSE(trace.ok());
  EXPECT_NE(trace.status().message().find("jobs.jsonl:2: submitOffset is not a duration"),
            std::string::npos);
  w.limit = 1;
  w.path = Write(
      "one.jsonl",
      R"({"submitOffset": "60s", "project": "demo", "job": {"displayName": "x", "jobSpec": {"workerPoolSpecs": [{"machineSpec": {"machineType": "a3-megagpu-8g"}, "replicaCount": "2", "containerSpec": {"imageUri": "i"}}]}}})"
      "\n");
  auto one = ReadTrace(w);
  ASSERT_TRUE(one.ok()) << one.status().message();
  ASSERT_NE(one->jobs[0].body, nullptr);
  Scenario s;
  s.shapes = {"a3-megagpu-8g"};
  auto built = BuildJob(s, one->jobs[0]);
  ASSERT_TRUE(built.ok());
  EXPECT_EQ(built->nodes, 2);
  EXPECT_EQ(built->body.display_name, "x");
}

// Philly and Helios record fractional GPUs (a job sharing a GPU). Vertex sells whole GPUs, so a
// fraction takes the smallest shape that holds it: half a GPU one a3-highgpu-1g, 2.5 GPUs one
// a3-highgpu-4g.
TEST(TraceTest, FractionalGpusTakeTheSmallestShapeThatHoldsThem) {
  Workload w;
  w.format = TraceFormat::kCsv;
  w.columns = {"submit", "duration", "gpus", "", "", "", ""};
  w.path = Write("fractions.csv", "submit,duration,gpus\n0,60,0.5\n10,60,2.5\n");
  auto trace = ReadTrace(w);
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  ASSERT_EQ(trace->jobs.size(), 2u);
  EXPECT_EQ(trace->skipped, 0) << "a fraction of a GPU is a GPU job, not skipped";
  Scenario s;
  s.shapes = {"a3-highgpu-1g", "a3-highgpu-2g", "a3-highgpu-4g", "a3-megagpu-8g"};
  auto half = BuildJob(s, trace->jobs[0]);
  ASSERT_TRUE(half.ok()) << half.status().message();
  EXPECT_EQ(half->machine_type, "a3-highgpu-1g");
  EXPECT_EQ(half->nodes, 1);
  auto two_and_a_half = BuildJob(s, trace->jobs[1]);
  ASSERT_TRUE(two_and_a_half.ok());
  EXPECT_EQ(two_and_a_half->machine_type, "a3-highgpu-4g");
}

TEST(JobBuilderTest, GpusFitTheSmallestShapeOrWholeNodesOfTheLargestAsAGang) {
  Scenario s;
  s.shapes = {"a3-highgpu-1g", "a3-highgpu-2g", "a3-highgpu-4g", "a3-megagpu-8g"};
  s.placement = {{{"research"}, 0, 16, "SPOT_THEN_ON_DEMAND", ""}, {{}, 0, 0, "ON_DEMAND", ""}};
  s.checkpoint_interval = 1800s;
  s.checkpoint_save = 60s;
  const TraceJob small = Job(7, 3600s, 3, 0, "research");
  auto one = BuildJob(s, small);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->machine_type, "a3-highgpu-4g");
  EXPECT_EQ(one->nodes, 1);
  EXPECT_EQ(one->body.job_spec.scheduling->strategy, SchedulingStrategy::kLowCost);
  const auto& env = one->body.job_spec.worker_pool_specs[0].container_spec->env;
  EXPECT_EQ(env[0].value, "3600s");
  EXPECT_EQ(env[1].name, "TRAINYARD_CHECKPOINT_INTERVAL");
  ASSERT_EQ(env.size(), 3u) << "no restore time set, none passed";
  EXPECT_EQ(env[2].name, "TRAINYARD_CHECKPOINT_SAVE_TIME");
  EXPECT_EQ(env[2].value, "60s");

  const TraceJob large = Job(8, 60s, 20, 0, "research");
  auto gang = BuildJob(s, large);
  ASSERT_TRUE(gang.ok());
  EXPECT_EQ(gang->machine_type, "a3-megagpu-8g");
  EXPECT_EQ(gang->nodes, 3);
  ASSERT_EQ(gang->body.job_spec.worker_pool_specs.size(), 2u);
  EXPECT_EQ(gang->body.job_spec.worker_pool_specs[1].replica_count, 2);
  EXPECT_EQ(gang->body.job_spec.scheduling->strategy, SchedulingStrategy::kStandard);
  EXPECT_EQ(gang->body.job_spec.worker_pool_specs[0].machine_spec->reservation_affinity->type,
            ReservationAffinityType::kNoReservation)
      << "ON_DEMAND never takes a reservation";

  const TraceJob spread = Job(9, 60s, 32, 2, "x");
  auto refused = BuildJob(s, spread);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(":9: no shape has 16 GPUs a node"), std::string::npos);
}

TEST(JobBuilderTest, JobsOnAPersistentResourceTakeItsMachineTypeAndAGangLargerThanItIsRefused) {
  Scenario s;
  s.shapes = {"a3-highgpu-1g", "a3-megagpu-8g"};
  s.workload.path = "trace.csv";
  s.resources = {ResourcePlan{"team-pool", "team", "a3-megagpu-8g", 2, 1, 4}};
  s.placement = {{{"team"}, 0, 0, "STANDARD", "team-pool"}, {{}, 0, 0, "ON_DEMAND", ""}};
  const TraceJob one_gpu = Job(3, 600s, 1, 0, "team");
  auto small = BuildJob(s, one_gpu);
  ASSERT_TRUE(small.ok()) << small.status().message();
  EXPECT_EQ(small->machine_type, "a3-megagpu-8g") << "the resource's, not the smallest shape";
  EXPECT_EQ(small->body.job_spec.persistent_resource_id, "team-pool");
  const TraceJob elsewhere = Job(4, 600s, 1, 0, "other");
  auto other = BuildJob(s, elsewhere);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->machine_type, "a3-highgpu-1g");
  EXPECT_EQ(other->body.job_spec.persistent_resource_id, "");

  const TraceJob fits = Job(5, 600s, 32, 0, "team");
  auto four = BuildJob(s, fits);
  ASSERT_TRUE(four.ok());
  EXPECT_EQ(four->nodes, 4) << "up to its autoscaling maximum";
  const TraceJob too_large = Job(6, 600s, 40, 0, "team");
  auto refused = BuildJob(s, too_large);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "trace.csv:6: needs 5 nodes of a3-megagpu-8g; persistent resource team-pool holds at "
            "most 4");
}

}  // namespace
}  // namespace trainyard::simulate
