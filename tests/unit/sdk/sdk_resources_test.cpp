// Decoding of what the server returns: operations and their outcome, persistent resources' seam.
#include <gtest/gtest.h>

#include "sdk/resources.h"

namespace trainyard::sdk {
namespace {

using nlohmann::json;

TEST(SdkResourcesTest, ADoneOperationGivesItsResponse) {
  auto op = DecodeOperation(json::parse(R"({
    "name": "projects/1/locations/us-central1/operations/9",
    "metadata": {"@type": "type.googleapis.com/google.cloud.aiplatform.v1.DeleteOperationMetadata"},
    "done": true,
    "response": {"@type": "type.googleapis.com/google.protobuf.Empty"},
    "newField": 1})"));
  ASSERT_TRUE(op.ok()) << op.status().message();
  EXPECT_TRUE(op->done);
  EXPECT_EQ(op->raw["newField"], 1);
  auto result = OperationResult(*op);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ((*result)["@type"], "type.googleapis.com/google.protobuf.Empty");
}

TEST(SdkResourcesTest, AFailedOperationGivesItsErrorAsAStatus) {
  auto op = DecodeOperation(json::parse(R"({
    "name": "projects/1/locations/us-central1/operations/9", "done": true,
    "error": {"code": 9, "message": "job is still running"}})"));
  ASSERT_TRUE(op.ok()) << op.status().message();
  auto result = OperationResult(*op);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(result.status().message(), "job is still running");
}

TEST(SdkResourcesTest, ARunningOperationHasNoResultYet) {
  auto op = DecodeOperation(json::parse(R"({"name": "operations/9"})"));
  ASSERT_TRUE(op.ok()) << op.status().message();
  EXPECT_FALSE(op->done);
  EXPECT_FALSE(OperationResult(*op).ok());
}

TEST(SdkResourcesTest, MalformedOperationsAreRefused) {
  EXPECT_FALSE(DecodeOperation(json::array()).ok());
  EXPECT_FALSE(DecodeOperation(json::parse(R"({"done": true})")).ok());  // no name
  EXPECT_FALSE(DecodeOperation(json::parse(R"({"name": "x", "done": "yes"})")).ok());
}

TEST(SdkResourcesTest, APersistentResourceKeepsItsRawJson) {
  auto resource = DecodePersistentResource(json::parse(R"({
    "name": "projects/1/locations/us-central1/persistentResources/pool-a", "state": "RUNNING",
    "resourcePools": [{"id": "a", "replicaCount": "2"}], "newerField": 1})"));
  ASSERT_TRUE(resource.ok()) << resource.status().message();
  EXPECT_EQ(resource->state(), ResourceState::kRunning);
  EXPECT_EQ(resource->resource.resource_pools.at(0).replica_count, 2);
  EXPECT_EQ(resource->raw["newerField"], 1);
  EXPECT_EQ(resource->raw["resourcePools"][0]["replicaCount"], "2");
}

TEST(SdkResourcesTest, JobIdIsTheLastSegment) {
  EXPECT_EQ(JobId("projects/1/locations/us-central1/customJobs/42"), "42");
  EXPECT_EQ(JobId("42"), "42");
}

}  // namespace
}  // namespace trainyard::sdk
