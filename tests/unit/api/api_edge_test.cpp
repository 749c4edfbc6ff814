// The HTTP edge without a socket: routing, error bodies, body parsing, request ids.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "api/api_service.h"
#include "api/error_body.h"
#include "api/json_body.h"
#include "api/router.h"

namespace trainyard::api {
namespace {

StatusOr<HttpResponse> Ok(const HttpRequest&, const RouteMatch&) { return HttpResponse{}; }

TEST(RouterTest, CapturesSegmentsAndCustomVerbs) {
  Router router;
  router.Add("POST", "/{version}/projects/{project}/locations/{location}/customJobs/{job}:cancel",
             Access::kProjectEditor, Ok);
  router.Add("GET", "/{version}/projects/{project}/locations/{location}/customJobs/{job}",
             Access::kProjectViewer, Ok);
  RouteMatch m;
  bool path_matched = false;
  ASSERT_NE(router.Match("POST", "/v1/projects/p/locations/us-central1/customJobs/12:cancel", m,
                         path_matched),
            nullptr);
  EXPECT_EQ(m.params["job"], "12");
  EXPECT_EQ(m.params["version"], "v1");
  EXPECT_EQ(
      router.Match("POST", "/v1/projects/p/locations/l/customJobs/12:reboot", m, path_matched),
      nullptr);
  ASSERT_NE(router.Match("GET", "/v1/projects/p/locations/l/customJobs/12", m, path_matched),
            nullptr);
}

TEST(RouterTest, TellsAWrongMethodFromAnUnknownPath) {
  Router router;
  router.Add("GET", "/{version}/projects/{project}/locations/{location}/customJobs/{job}",
             Access::kProjectViewer, Ok);
  RouteMatch m;
  bool path_matched = false;
  EXPECT_EQ(router.Match("PUT", "/v1/projects/p/locations/l/customJobs/1", m, path_matched),
            nullptr);
  EXPECT_TRUE(path_matched);
  EXPECT_EQ(router.Match("GET", "/v1/projects/p/locations/l/nothing/1", m, path_matched), nullptr);
  EXPECT_FALSE(path_matched);
  EXPECT_EQ(router.Match("GET", "/v1/projects//locations/l/customJobs/1", m, path_matched), nullptr)
      << "an empty segment is not a capture";
}

TEST(ErrorBodyTest, RendersTheVertexErrorBody) {
  Status s = InvalidField("jobSpec.workerPoolSpecs[0].replicaCount", "must be 1");
  HttpResponse r = ErrorResponse(s, "req-9");
  EXPECT_EQ(r.status, 400);
  auto body = nlohmann::json::parse(r.body);
  EXPECT_EQ(body["error"]["code"], 400);
  EXPECT_EQ(body["error"]["status"], "INVALID_ARGUMENT");
  EXPECT_EQ(body["error"]["message"], s.message());
  for (const auto& detail : body["error"]["details"]) EXPECT_TRUE(detail.contains("@type"));
  EXPECT_EQ(body["error"]["details"][0]["metadata"]["requestId"], "req-9");
  EXPECT_EQ(body["error"]["details"][1]["fieldViolations"][0]["field"],
            "jobSpec.workerPoolSpecs[0].replicaCount");
}

TEST(ErrorBodyTest, MapsEveryCodeAsTheWireReferenceSays) {
  const std::vector<std::pair<Code, int>> table = {
      {Code::kInvalidArgument, 400},   {Code::kFailedPrecondition, 400},
      {Code::kOutOfRange, 400},        {Code::kUnauthenticated, 401},
      {Code::kPermissionDenied, 403},  {Code::kNotFound, 404},
      {Code::kAlreadyExists, 409},     {Code::kAborted, 409},
      {Code::kResourceExhausted, 429}, {Code::kCancelled, 499},
      {Code::kUnknown, 500},           {Code::kInternal, 500},
      {Code::kDataLoss, 500},          {Code::kUnimplemented, 501},
      {Code::kUnavailable, 503},       {Code::kDeadlineExceeded, 504}};
  for (auto [code, http] : table) EXPECT_EQ(HttpStatusFor(code), http) << CodeName(code);
}

TEST(JsonBodyTest, RefusesWhatIsNotAJsonObject) {
  HttpRequest r;
  EXPECT_FALSE(ParseJsonBody(r, false).ok()) << "empty create body";
  EXPECT_TRUE(ParseJsonBody(r, true).ok()) << "empty body of a custom verb";
  r.body = "\"\"";
  EXPECT_TRUE(ParseJsonBody(r, true).ok()) << "the Node SDK's operations :cancel body";
  r.body = "[1]";
  EXPECT_FALSE(ParseJsonBody(r, false).ok());
  r.body = "{\"a\":";
  EXPECT_FALSE(ParseJsonBody(r, false).ok());
}

TEST(JsonBodyTest, DepthIsCheckedBeforeParsing) {
  HttpRequest r;
  auto nested = [](int depth) {
    return "{\"a\":" + std::string(depth - 1, '[') + std::string(depth - 1, ']') + "}";
  };
  r.body = nested(kMaxJsonDepth);
  EXPECT_TRUE(ParseJsonBody(r, false).ok());
  r.body = nested(kMaxJsonDepth + 1);
  auto refused = ParseJsonBody(r, false);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kInvalidArgument);
}

TEST(RequestIdTest, KeepsAValidHeaderAndReplacesOthers) {
  HttpRequest r;
  r.headers["x-request-id"] = "abc.DEF_123-x";
  EXPECT_EQ(RequestIdFor(r), "abc.DEF_123-x");
  for (const std::string& bad :
       {std::string(""), std::string(65, 'a'), std::string("a b"), std::string("a\"b")}) {
    r.headers["x-request-id"] = bad;
    std::string id = RequestIdFor(r);
    EXPECT_EQ(id.size(), 32u) << bad;
    EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);
  }
}

}  // namespace
}  // namespace trainyard::api
