// readMask: camelCase or snake_case paths, nested paths, unknown fields refused, and what survives.
#include "api/field_mask.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace trainyard::api {
namespace {

using Paths = std::vector<std::vector<std::string>>;

const std::vector<std::string>& Known() {
  static const std::vector<std::string> fields = {"name",  "displayName", "jobSpec", "state",
                                                  "error", "createTime",  "endTime", "labels"};
  return fields;
}

nlohmann::json Resource() {
  return nlohmann::json::parse(R"({
    "name": "projects/1/locations/us-central1/customJobs/42",
    "displayName": "train",
    "state": "JOB_STATE_RUNNING",
    "createTime": "2026-01-01T00:00:00Z",
    "labels": {"team": "a"},
    "jobSpec": {
      "workerPoolSpecs": [{"replicaCount": "1", "machineSpec": {"machineType": "a3-highgpu-8g"}}],
      "serviceAccount": "sa@example.com",
      "scheduling": {"timeout": "3600s"}
    }
  })");
}

nlohmann::json Masked(const std::string& text) {
  auto mask = ParseFieldMask(text, Known());
  EXPECT_TRUE(mask.ok()) << text << ": " << mask.status().message();
  if (!mask.ok()) return nullptr;
  return ApplyFieldMask(Resource(), *mask);
}

TEST(FieldMaskTest, CamelCaseAndSnakeCaseNameTheSameField) {
  auto camel = ParseFieldMask("displayName,createTime", Known());
  auto snake = ParseFieldMask("display_name,create_time", Known());
  ASSERT_TRUE(camel.ok()) << camel.status().message();
  ASSERT_TRUE(snake.ok()) << snake.status().message();
  const Paths expected = {{"displayName"}, {"createTime"}};
  EXPECT_EQ(camel->paths, expected);
  EXPECT_EQ(snake->paths, expected);
  const nlohmann::json want = {{"displayName", "train"}, {"createTime", "2026-01-01T00:00:00Z"}};
  EXPECT_EQ(Masked("display_name,create_time"), want);
  EXPECT_EQ(Masked("displayName,createTime"), want);
}

TEST(FieldMaskTest, ANestedPathKeepsOnlyThatBranch) {
  auto mask = ParseFieldMask("job_spec.worker_pool_specs", Known());
  ASSERT_TRUE(mask.ok()) << mask.status().message();
  EXPECT_EQ(mask->paths, (Paths{{"jobSpec", "workerPoolSpecs"}}));
  nlohmann::json out = ApplyFieldMask(Resource(), *mask);
  nlohmann::json want = {
      {"jobSpec", {{"workerPoolSpecs", Resource()["jobSpec"]["workerPoolSpecs"]}}}};
  EXPECT_EQ(out, want) << out.dump();
}

TEST(FieldMaskTest, AWholeFieldAndAPathInsideItKeepTheWholeFieldInEitherOrder) {
  EXPECT_EQ(Masked("jobSpec,jobSpec.workerPoolSpecs"),
            (nlohmann::json{{"jobSpec", Resource()["jobSpec"]}}));
  EXPECT_EQ(Masked("jobSpec.workerPoolSpecs,jobSpec"),
            (nlohmann::json{{"jobSpec", Resource()["jobSpec"]}}));
}

TEST(FieldMaskTest, AnUnknownTopLevelFieldIsRefusedNamingReadMask) {
  for (const std::string text : {"bogus", "displayName,bogus", "bogus.state", "DisplayName"}) {
    auto mask = ParseFieldMask(text, Known());
    ASSERT_FALSE(mask.ok()) << text;
    EXPECT_EQ(mask.status().code(), Code::kInvalidArgument) << text;
    ASSERT_EQ(mask.status().violations().size(), 1u) << text;
    EXPECT_EQ(mask.status().violations()[0].field, "readMask") << text;
  }
  auto mask = ParseFieldMask("display_name,no_such_field", Known());
  ASSERT_FALSE(mask.ok());
  EXPECT_NE(mask.status().message().find("no_such_field"), std::string::npos)
      << "the message names the offending path: " << mask.status().message();
}

TEST(FieldMaskTest, AnEmptySegmentIsRefused) {
  for (const std::string text : {"jobSpec.", "job_spec..worker_pool_specs", ".state"}) {
    auto mask = ParseFieldMask(text, Known());
    ASSERT_FALSE(mask.ok()) << text;
    EXPECT_EQ(mask.status().code(), Code::kInvalidArgument) << text;
    ASSERT_FALSE(mask.status().violations().empty()) << text;
    EXPECT_EQ(mask.status().violations()[0].field, "readMask") << text;
  }
}

TEST(FieldMaskTest, AnEmptyMaskKeepsEverything) {
  auto mask = ParseFieldMask("", Known());
  ASSERT_TRUE(mask.ok()) << mask.status().message();
  EXPECT_TRUE(mask->paths.empty());
  EXPECT_EQ(ApplyFieldMask(Resource(), *mask), Resource());
}

TEST(FieldMaskTest, SpacesAroundCommasAreIgnored) {
  auto mask = ParseFieldMask(" display_name ,state,  job_spec.worker_pool_specs  ", Known());
  ASSERT_TRUE(mask.ok()) << mask.status().message();
  EXPECT_EQ(mask->paths, (Paths{{"displayName"}, {"state"}, {"jobSpec", "workerPoolSpecs"}}));
  nlohmann::json out = ApplyFieldMask(Resource(), *mask);
  EXPECT_EQ(out.size(), 3u) << out.dump();
  EXPECT_EQ(out["displayName"], "train");
  EXPECT_EQ(out["state"], "JOB_STATE_RUNNING");
  EXPECT_EQ(out["jobSpec"].size(), 1u);
}

TEST(FieldMaskTest, FieldsAbsentFromTheResourceStayAbsent) {
  nlohmann::json out = Masked("displayName,endTime,error");
  EXPECT_EQ(out, (nlohmann::json{{"displayName", "train"}})) << "no nulls for unset fields";
}

TEST(FieldMaskTest, APathThroughAScalarOrListNeverChangesAFieldsJsonType) {
  // A client decodes displayName as a string and workerPoolSpecs as a list; a mask that walks
  // past them must not turn them into objects.
  nlohmann::json out = Masked("display_name.x,job_spec.worker_pool_specs.machine_spec");
  if (out.contains("displayName")) {
    EXPECT_TRUE(out["displayName"].is_string()) << out.dump();
  }
  if (out.contains("jobSpec") && out["jobSpec"].contains("workerPoolSpecs")) {
    EXPECT_TRUE(out["jobSpec"]["workerPoolSpecs"].is_array()) << out.dump();
  }
}

}  // namespace
}  // namespace trainyard::api
