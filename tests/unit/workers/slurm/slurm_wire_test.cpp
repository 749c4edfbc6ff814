#include "workers/slurm/slurm_wire.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace trainyard::slurm {
namespace {

// Answers as a real slurmrestd 22.05 (openapi/v0.0.38) gave them (docs/runtimes.md, "slurmrestd
// v0.0.38"), trimmed.
TEST(SlurmWireTest, ASubmitIsTheJobTheRuntimeAsksForWithSlurmsRequeueOff) {
  SlurmSubmit s;
  s.name = "trainyard-7-a0";
  s.components = {SlurmComponent{"gpu", 3, 1}};
  s.environment = {{"PATH", "/usr/bin:/bin"}};
  s.time_limit_minutes = 62;
  s.script = "#!/bin/sh\ntrue\n";
  auto j = nlohmann::json::parse(EncodeSubmit(s));
  EXPECT_EQ(j["script"], "#!/bin/sh\ntrue\n");
  EXPECT_EQ(j["job"]["name"], "trainyard-7-a0");
  EXPECT_EQ(j["job"]["partition"], "gpu");
  EXPECT_EQ(j["job"]["tasks"], 3);
  EXPECT_EQ(j["job"]["time_limit"], 62);
  EXPECT_EQ(j["job"]["requeue"], false);
  EXPECT_EQ(j["job"]["environment"]["PATH"], "/usr/bin:/bin");
  s.components[0].partition.clear();
  EXPECT_FALSE(nlohmann::json::parse(EncodeSubmit(s))["job"].contains("partition"))
      << "the cluster's default partition";
}

TEST(SlurmWireTest, ComponentsOnTwoPartitionsAreAHeterogeneousSubmit) {
  SlurmSubmit s;
  s.name = "trainyard-7-a0";
  s.components = {SlurmComponent{"gpu", 1, 1}, SlurmComponent{"cpu", 2, 2}};
  s.time_limit_minutes = 62;
  s.script = "#!/bin/sh\ntrue\n";
  auto j = nlohmann::json::parse(EncodeSubmit(s));
  EXPECT_FALSE(j.contains("job"));
  ASSERT_EQ(j["jobs"].size(), 2u);
  EXPECT_EQ(j["jobs"][0]["partition"], "gpu");
  EXPECT_EQ(j["jobs"][1]["partition"], "cpu");
  EXPECT_EQ(j["jobs"][1]["tasks"], 2);
  EXPECT_EQ(j["jobs"][1]["nodes"], 2);
  for (const auto& c : j["jobs"]) {
    EXPECT_EQ(c["name"], "trainyard-7-a0");
    EXPECT_EQ(c["requeue"], false);
    EXPECT_EQ(c["time_limit"], 62);
  }
  EXPECT_EQ(j["script"], "#!/bin/sh\ntrue\n");
}

TEST(SlurmWireTest, AJobIdMeansSubmittedEvenWithErrors) {
  auto id = DecodeSubmitReply(
      200, R"({"errors":[{"error_code":2042,"error":"held"}],"job_id":12,"step_id":"BATCH"})");
  ASSERT_TRUE(id.ok()) << id.status().message();
  EXPECT_EQ(*id, 12);
}

TEST(SlurmWireTest, SlurmRefusingTheJobIsTheJobsFaultAnOutageIsNot) {
  auto refused = DecodeSubmitReply(
      500, R"({"errors":[{"error_code":2000,"error":"Invalid partition name specified"}]})");
  EXPECT_EQ(refused.status().code(), Code::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("Invalid partition name specified"), std::string::npos);
  auto expired = DecodeJobs(500, R"({"errors":[{"description":"Failed while looking for jobs",
      "error_number":-1,"error":"Unspecified error","source":"slurm_load_jobs"}],"jobs":[]})");
  EXPECT_EQ(expired.status().code(), Code::kUnavailable);
  EXPECT_NE(expired.status().message().find("token"), std::string::npos);
  auto unauthorized = DecodeJobs(401, "Authentication failure");
  EXPECT_EQ(unauthorized.status().code(), Code::kUnavailable);
  EXPECT_EQ(DecodeJobs(400, "Unable to parse query.").status().code(), Code::kInternal);
}

TEST(SlurmWireTest, JobsCarryWhatTheRuntimeReads) {
  auto jobs = DecodeJobs(200, R"({"errors":[],"jobs":[
      {"job_id":2,"name":"trainyard-7-a0","comment":"c","job_state":"FAILED",
       "state_reason":"NonZeroExitCode","exit_code":768,"nodes":"vm"},
      {"job_id":3,"name":"other","job_state":"PENDING","state_reason":"Resources","exit_code":0,
       "het_job_id":0,"het_job_offset":0},
      {"job_id":19,"name":"trainyard-8-a0","job_state":"RUNNING","het_job_id":18,
       "het_job_offset":1},
      {"name":"no id"}]})");
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 3u);
  EXPECT_EQ((*jobs)[1].het_job_id, 0) << "not heterogeneous";
  EXPECT_EQ((*jobs)[2].het_job_id, 18);
  EXPECT_EQ((*jobs)[2].het_job_offset, 1);
  EXPECT_EQ((*jobs)[0].job_id, 2);
  EXPECT_EQ((*jobs)[0].state, "FAILED");
  EXPECT_EQ((*jobs)[0].reason, "NonZeroExitCode");
  EXPECT_EQ((*jobs)[0].exit_status, 768);
  EXPECT_EQ((*jobs)[1].reason, "Resources");
}

TEST(SlurmWireTest, CancellingAJobSlurmNoLongerKnowsIsDone) {
  EXPECT_TRUE(DecodeCancelReply(200, R"({"errors":[]})").ok());
  EXPECT_TRUE(DecodeCancelReply(500, R"({"errors":[{"description":"unable to kill JobId=9",
      "error_number":2017,"error":"Invalid job id specified"}]})")
                  .ok());
  EXPECT_EQ(DecodeCancelReply(500, R"({"errors":[{"error_number":-1,"error":"x"}]})").code(),
            Code::kUnavailable);
}

TEST(SlurmWireTest, NodesSayWhereJobsCanRun) {
  auto nodes = DecodeNodes(200, R"({"errors":[],"nodes":[
      {"name":"vm","state":"idle","state_flags":[],"partitions":["debug","gpu"]},
      {"name":"a","state":"mixed","state_flags":["DRAIN"],"partitions":["gpu"]},
      {"name":"b","state":"down","state_flags":["NOT_RESPONDING"],"partitions":["gpu"]},
      {"name":"c","state":"allocated","partitions":["gpu"]}]})");
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  ASSERT_EQ(nodes->size(), 4u);
  EXPECT_EQ((*nodes)[0].partitions, (std::vector<std::string>{"debug", "gpu"}));
  EXPECT_TRUE(SlurmNodeUsable((*nodes)[0]));
  EXPECT_FALSE(SlurmNodeUsable((*nodes)[1])) << "drained";
  EXPECT_FALSE(SlurmNodeUsable((*nodes)[2])) << "down";
  EXPECT_TRUE(SlurmNodeUsable((*nodes)[3])) << "busy is still there";
}

}  // namespace
}  // namespace trainyard::slurm
