// PersistentResource <-> proto3 JSON: what gcloud and the Node SDK send, and what they read back.
#include "api/wire/persistent_resource_codec.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

using nlohmann::json;

TEST(PersistentResourceCodecTest, DecodesWhatTheNodeSdkSends) {
  // Numeric enums, int64 as strings, empty maps (docs/wire-format.md, "What the Node SDK sends").
  auto r = DecodePersistentResource(json::parse(R"({
    "resourcePools":[{"id":"pool-0","machineSpec":{"machineType":"a3-highgpu-8g",
      "acceleratorType":13,"acceleratorCount":8},"replicaCount":"2",
      "diskSpec":{"bootDiskType":"pd-ssd","bootDiskSizeGb":100},
      "autoscalingSpec":{"minReplicaCount":"1","maxReplicaCount":"4"}}],
    "labels":{},"displayName":"acc-pr"})"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->resource_pools.size(), 1u);
  const ResourcePool& pool = r->resource_pools[0];
  EXPECT_EQ(pool.machine_spec.accelerator_type, AcceleratorType::kNvidiaH100_80gb);
  EXPECT_EQ(pool.replica_count, 2);
  ASSERT_TRUE(pool.autoscaling_spec.has_value());
  EXPECT_EQ(pool.autoscaling_spec->max_replica_count, 4);
  EXPECT_EQ(r->display_name, "acc-pr");
}

TEST(PersistentResourceCodecTest, SnakeCaseAndOutputOnlyFieldsAreAcceptedOnCreate) {
  auto r = DecodePersistentResource(json::parse(R"({
    "display_name":"x","state":"RUNNING","createTime":"2026-01-01T00:00:00Z",
    "resource_pools":[{"machine_spec":{"machine_type":"n1-standard-4"},"replica_count":1,
      "used_replica_count":"1"}]})"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->display_name, "x");
  EXPECT_EQ(r->state, ResourceState::kUnspecified);  // output only: dropped
  EXPECT_FALSE(r->create_time.has_value());
  EXPECT_EQ(r->resource_pools[0].used_replica_count, 0);
}

TEST(PersistentResourceCodecTest, UnknownFieldsAreNamed) {
  auto r = DecodePersistentResource(
      json::parse(R"({"resourcePools":[{"machineSpec":{"machineType":"x"},"replicas":2}]})"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  ASSERT_FALSE(r.status().violations().empty());
  EXPECT_EQ(r.status().violations()[0].field, "resourcePools[0].replicas");
}

TEST(PersistentResourceCodecTest, RaySpecIsRememberedForValidationToRefuse) {
  auto r = DecodePersistentResource(
      json::parse(R"({"resourcePools":[],"resourceRuntimeSpec":{"raySpec":{"imageUri":"x"}}})"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->has_ray_spec);
}

TEST(PersistentResourceCodecTest, EncodesCamelCaseWithInt64StringsAndAnAnyType) {
  PersistentResource r;
  r.name = "projects/1/locations/us-central1/persistentResources/pr";
  r.state = ResourceState::kRunning;
  ResourcePool pool;
  pool.id = "p";
  pool.machine_spec.machine_type = "n1-standard-4";
  pool.replica_count = 3;
  pool.used_replica_count = 1;
  r.resource_pools.push_back(pool);
  json out = EncodePersistentResource(r);
  EXPECT_EQ(out["state"], "RUNNING");
  EXPECT_EQ(out["resourcePools"][0]["replicaCount"], "3");
  EXPECT_EQ(out["resourcePools"][0]["usedReplicaCount"], "1");
  json response = EncodePersistentResourceResponse(r);
  EXPECT_EQ(response["@type"], "type.googleapis.com/google.cloud.aiplatform.v1.PersistentResource");
  EXPECT_EQ(response["name"], r.name);
  // Round trip of what storage keeps.
  auto back = DecodePersistentResource(out, OutputOnlyFields::kKeep, UnknownFields::kIgnore);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->resource_pools[0].replica_count, 3);
  EXPECT_EQ(back->state, ResourceState::kRunning);
}

}  // namespace
}  // namespace trainyard
