// The line `jobs wait` prints on each change: while a job waits in the queue, where it stands and
// why; once admitted, what it waits for before it runs and for how long (model time).
#include "cmd/job_output.h"

#include <gtest/gtest.h>

#include <sstream>

#include "api/wire/custom_job_codec.h"

namespace trainyard::cmd {
namespace {

using namespace std::chrono_literals;

sdk::Job Pending() {
  sdk::Job job;
  job.job.name = "projects/1/locations/us-central1/customJobs/7";
  job.job.state = JobState::kPending;
  SchedulingStatus s;
  s.reason_code = "ADMITTED";
  s.admitted_at = FromUnixMicros(1'800'000'000'000'000);
  s.startup = 308s;
  s.startup_detail = {"a3-highgpu-8g", 1, 300s, 10, 8s};
  job.job.trainyard = s;
  return job;
}

std::string Line(const sdk::Job& job) {
  std::ostringstream out;
  PrintWaitLine(out, 800ms, job);
  return out.str();
}

TEST(JobOutputTest, AnAdmittedJobSaysWhatItWaitsForAndForHowLong) {
  EXPECT_NE(Line(Pending()).find("JOB_STATE_PENDING     booting 1 a3-highgpu-8g (5m0s), then "
                                 "pulling 10 GB (8s): ready in 5m8s of model time"),
            std::string::npos)
      << Line(Pending());
}

TEST(JobOutputTest, AWarmPlacementOnlyPullsAndACachedOneSaysItIsStarting) {
  sdk::Job pull = Pending();
  pull.job.trainyard->startup = 8s;
  pull.job.trainyard->startup_detail = {"a3-highgpu-8g", 0, {}, 10, 8s};
  EXPECT_NE(Line(pull).find("pulling 10 GB (8s): ready in 8s of model time"), std::string::npos)
      << Line(pull);
  sdk::Job warm = Pending();
  warm.job.trainyard->startup = {};
  warm.job.trainyard->startup_detail = {};
  EXPECT_NE(Line(warm).find("ADMITTED"), std::string::npos) << "nothing to wait for: the reason";
}

// The program's start-up (PROGRAM_STARTUP) comes after the nodes are ready; the line says it,
// and the API's JSON carries it for clients that read the job back.
TEST(JobOutputTest, TheProgramsStartupFollowsTheNodesBeingReady) {
  sdk::Job job = Pending();
  job.job.trainyard->program_startup = 70s;
  EXPECT_NE(Line(job).find("ready in 5m8s of model time, then the program starts (1m10s)"),
            std::string::npos)
      << Line(job);
  sdk::Job cached = Pending();
  cached.job.trainyard->startup = {};
  cached.job.trainyard->startup_detail = {};
  cached.job.trainyard->program_startup = 70s;
  EXPECT_NE(Line(cached).find("starting: ready in 0s of model time, then the program starts "
                              "(1m10s)"),
            std::string::npos)
      << Line(cached);

  const nlohmann::json status = EncodeSchedulingStatus(*job.job.trainyard);
  EXPECT_EQ(status["startup"]["programStartupDuration"], "70s") << status.dump();
  EXPECT_FALSE(EncodeSchedulingStatus(*Pending().job.trainyard)["startup"].contains(
      "programStartupDuration"))
      << "none to say";
}

TEST(JobOutputTest, AQueuedJobSaysItsPlaceAndWhy) {
  sdk::Job queued;
  queued.job.state = JobState::kQueued;
  SchedulingStatus s;
  s.queue_position = 3;
  s.reason_code = "NO_CAPACITY";
  s.reason_message = "no free a3-highgpu-8g in us-central1";
  queued.job.trainyard = s;
  EXPECT_NE(Line(queued).find("queue position 3 · NO_CAPACITY: no free a3-highgpu-8g"),
            std::string::npos)
      << Line(queued);
}

TEST(JobOutputTest, TheStartupTravelsTheWireToTheClient) {
  const CustomJob sent = Pending().job;
  nlohmann::json body = EncodeCustomJob(sent, ApiVersion::kV1);
  EXPECT_EQ(body["trainyard"]["startup"]["readyTime"], "2027-01-15T08:05:08Z");
  auto read =
      DecodeCustomJob(body, OutputOnlyFields::kKeep, UnknownFields::kReject, ApiVersion::kV1);
  ASSERT_TRUE(read.ok()) << read.status().message();
  ASSERT_TRUE(read->trainyard.has_value());
  EXPECT_EQ(read->trainyard->startup, 308s);
  EXPECT_EQ(read->trainyard->startup_detail.boot_nodes, 1);
  EXPECT_EQ(read->trainyard->startup_detail.boot, 300s);
  EXPECT_EQ(read->trainyard->startup_detail.image_gb, 10);
  EXPECT_EQ(read->trainyard->startup_detail.image_pull, 8s);
  EXPECT_EQ(read->trainyard->startup_detail.machine_type, "a3-highgpu-8g");
}

}  // namespace
}  // namespace trainyard::cmd
