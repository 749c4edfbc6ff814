// Every non-2xx reply becomes a Status with the canonical code, message and field violations.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "api/error_body.h"
#include "sdk/http_error.h"

namespace trainyard::sdk {
namespace {

TEST(SdkHttpErrorTest, TheServersErrorBodyDecodesBackToTheSameStatus) {
  Status sent = InvalidField("jobSpec.workerPoolSpecs[0].replicaCount", "must be at least 1");
  sent.WithViolation("displayName", "is required");
  api::HttpResponse reply = api::ErrorResponse(sent, "req-1");

  Status got = StatusFromHttpError(reply.status, reply.body);
  EXPECT_EQ(got.code(), Code::kInvalidArgument);
  EXPECT_EQ(got.message(), sent.message());
  ASSERT_EQ(got.violations().size(), 2u);
  EXPECT_EQ(got.violations()[0].field, "jobSpec.workerPoolSpecs[0].replicaCount");
  EXPECT_EQ(got.violations()[0].description, "must be at least 1");
  EXPECT_EQ(got.violations()[1].field, "displayName");
  // The ErrorInfo detail is kept whole, request id included.
  ASSERT_EQ(got.details().size(), 1u);
  auto info = nlohmann::json::parse(got.details()[0]);
  EXPECT_EQ(info["@type"], "type.googleapis.com/google.rpc.ErrorInfo");
  EXPECT_EQ(info["reason"], "INVALID_ARGUMENT");
  EXPECT_EQ(info["metadata"]["requestId"], "req-1");
}

TEST(SdkHttpErrorTest, TheNamedStatusWinsOverTheHttpStatus) {
  // FAILED_PRECONDITION and INVALID_ARGUMENT share 400; only the body tells them apart.
  api::HttpResponse reply = api::ErrorResponse(FailedPrecondition("job already ended"), "");
  ASSERT_EQ(reply.status, 400);
  Status got = StatusFromHttpError(reply.status, reply.body);
  EXPECT_EQ(got.code(), Code::kFailedPrecondition);
  EXPECT_EQ(got.message(), "job already ended");
}

TEST(SdkHttpErrorTest, ABodyThatIsNotTheErrorBodyFallsBackToTheHttpStatus) {
  Status got = StatusFromHttpError(503, "<html>Service Unavailable</html>");
  EXPECT_EQ(got.code(), Code::kUnavailable);
  EXPECT_NE(got.message().find("HTTP 503"), std::string::npos);
  EXPECT_NE(got.message().find("Service Unavailable"), std::string::npos);

  EXPECT_EQ(StatusFromHttpError(429, "").code(), Code::kResourceExhausted);
  EXPECT_EQ(StatusFromHttpError(404, "").code(), Code::kNotFound);
  EXPECT_EQ(StatusFromHttpError(502, "").code(), Code::kInternal);
  EXPECT_EQ(StatusFromHttpError(418, "").code(), Code::kFailedPrecondition);
}

TEST(SdkHttpErrorTest, EveryCodeNameParses) {
  for (int i = 1; i <= static_cast<int>(Code::kUnauthenticated); ++i) {
    EXPECT_EQ(ParseCodeName(CodeName(static_cast<Code>(i))), static_cast<Code>(i));
  }
  EXPECT_EQ(ParseCodeName("NOT_A_CODE"), Code::kUnknown);
}

// A 429 says when to come back: RetryInfo first (it has the finer grain), else Retry-After.
TEST(SdkHttpErrorTest, TheServersRetryDelayComesFromRetryInfoOrRetryAfter) {
  Status limited(Code::kResourceExhausted, "Quota exceeded");
  limited.WithDetail(
      R"({"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"0.350s"})");
  api::HttpResponse reply = api::ErrorResponse(limited, "req-2");
  EXPECT_EQ(reply.status, 429);
  Status got = StatusFromHttpError(reply.status, reply.body);
  EXPECT_EQ(ServerRetryDelay(got, "1"), std::chrono::milliseconds(350));
  EXPECT_EQ(ServerRetryDelay(Status(Code::kResourceExhausted, "x"), "2"),
            std::chrono::milliseconds(2000));
  EXPECT_EQ(ServerRetryDelay(Status(Code::kResourceExhausted, "x"), ""), std::nullopt);
  EXPECT_EQ(
      ServerRetryDelay(Status(Code::kResourceExhausted, "x"), "Wed, 21 Oct 2015 07:28:00 GMT"),
      std::nullopt);
  EXPECT_EQ(ServerRetryDelay(Status(Code::kResourceExhausted, "x"), "-1"), std::nullopt);
}

}  // namespace
}  // namespace trainyard::sdk
