// The codec as a client reads responses (the SDK): the `trainyard` object decodes back into the
// model, and unknown fields can be ignored at any depth instead of rejected.
#include <gtest/gtest.h>

#include "api/wire/custom_job_codec.h"

namespace trainyard {
namespace {

using nlohmann::json;

CustomJob PlacedJob() {
  CustomJob job;
  job.name = "projects/1/locations/us-central1/customJobs/7";
  job.state = JobState::kRunning;
  job.job_spec.worker_pool_specs.emplace_back().replica_count = 2;
  SchedulingStatus& s = job.trainyard.emplace();
  s.reason_code = "ADMITTED";
  s.reason_message = "placed in us-central1-b";
  s.queue_position = 0;
  s.priority = 700;
  s.zone = "us-central1-b";
  s.pools.push_back({"us-central1-b/a3-highgpu-8g/SPOT",
                     "a3-highgpu-8g",
                     "SPOT",
                     "res-1",
                     2,
                     {"node-0", "node-1"}});
  s.admitted_at = FromUnixMicros(1'700'000'000'000'000);
  s.hourly_price_usd = 35.5;
  s.cost_usd = 0.25;
  return job;
}

TEST(WireClientDecodeTest, TheTrainyardObjectRoundTripsWhenOutputOnlyFieldsAreKept) {
  const json encoded = EncodeCustomJob(PlacedJob());
  auto decoded = DecodeCustomJob(encoded, OutputOnlyFields::kKeep);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  ASSERT_TRUE(decoded->trainyard.has_value());
  EXPECT_EQ(decoded->trainyard->pools[0].nodes, (std::vector<std::string>{"node-0", "node-1"}));
  EXPECT_EQ(decoded->trainyard->queue_position, 0);
  EXPECT_EQ(EncodeCustomJob(*decoded), encoded);
}

TEST(WireClientDecodeTest, TheTrainyardObjectIsDroppedFromCreateRequests) {
  auto decoded = DecodeCustomJob(EncodeCustomJob(PlacedJob()));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_FALSE(decoded->trainyard.has_value());
}

TEST(WireClientDecodeTest, UnknownFieldsAreIgnoredAtAnyDepthOnlyWhenAskedTo) {
  json body = EncodeCustomJob(PlacedJob());
  body["newTopLevel"] = 1;
  body["jobSpec"]["workerPoolSpecs"][0]["newPoolField"] = "x";
  body["trainyard"]["placement"]["newPlacementField"] = true;

  EXPECT_EQ(DecodeCustomJob(body, OutputOnlyFields::kKeep).status().code(), Code::kInvalidArgument);
  auto lenient = DecodeCustomJob(body, OutputOnlyFields::kKeep, UnknownFields::kIgnore);
  ASSERT_TRUE(lenient.ok()) << lenient.status().message();
  EXPECT_EQ(lenient->trainyard->zone, "us-central1-b");
  EXPECT_EQ(lenient->job_spec.worker_pool_specs[0].replica_count, 2);

  // Ignoring unknown keys does not relax type checks of known ones.
  body["trainyard"]["costUsd"] = "not a number";
  EXPECT_FALSE(DecodeCustomJob(body, OutputOnlyFields::kKeep, UnknownFields::kIgnore).ok());
}

TEST(WireClientDecodeTest, RpcStatusDecodes) {
  auto status = DecodeRpcStatus(json::parse(R"({"code":5,"message":"gone","details":[]})"));
  ASSERT_TRUE(status.ok()) << status.status().message();
  EXPECT_EQ(status->code, 5);
  EXPECT_EQ(status->message, "gone");
  EXPECT_FALSE(DecodeRpcStatus(json::parse(R"({"code":"five"})")).ok());
}

}  // namespace
}  // namespace trainyard
