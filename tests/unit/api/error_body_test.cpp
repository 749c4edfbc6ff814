// The Vertex error body: HTTP status per code (docs/wire-format.md, "Errors"), shape, details and
// request id.
#include "api/error_body.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace trainyard::api {
namespace {

// docs/wire-format.md, "Errors": rpc code → HTTP status.
const std::map<Code, int>& WireTable() {
  static const std::map<Code, int> table = {
      {Code::kInvalidArgument, 400},   {Code::kFailedPrecondition, 400},
      {Code::kOutOfRange, 400},        {Code::kUnauthenticated, 401},
      {Code::kPermissionDenied, 403},  {Code::kNotFound, 404},
      {Code::kAlreadyExists, 409},     {Code::kAborted, 409},
      {Code::kResourceExhausted, 429}, {Code::kCancelled, 499},
      {Code::kUnknown, 500},           {Code::kInternal, 500},
      {Code::kDataLoss, 500},          {Code::kUnimplemented, 501},
      {Code::kUnavailable, 503},       {Code::kDeadlineExceeded, 504},
  };
  return table;
}

nlohmann::json Body(const HttpResponse& r) { return nlohmann::json::parse(r.body); }

// The first detail with this @type, or null.
nlohmann::json DetailOfType(const nlohmann::json& body, const std::string& type) {
  for (const auto& d : body["error"]["details"]) {
    if (d.value("@type", "") == type) return d;
  }
  return nullptr;
}

constexpr char kErrorInfo[] = "type.googleapis.com/google.rpc.ErrorInfo";
constexpr char kBadRequest[] = "type.googleapis.com/google.rpc.BadRequest";

TEST(ErrorResponseTest, EveryErrorCodeHasItsHttpStatusInTheResponseAndTheBody) {
  // Every google.rpc code but OK, 1..16, is in the table.
  for (int i = 1; i <= 16; ++i) {
    Code code = static_cast<Code>(i);
    auto it = WireTable().find(code);
    ASSERT_NE(it, WireTable().end()) << i;
    EXPECT_EQ(HttpStatusFor(code), it->second) << CodeName(code);
    HttpResponse r = ErrorResponse(Status(code, "boom"), "rid");
    EXPECT_EQ(r.status, it->second) << CodeName(code);
    nlohmann::json body = Body(r);
    EXPECT_EQ(body["error"]["code"], it->second) << "the HTTP status, not the rpc code";
    EXPECT_EQ(body["error"]["status"], CodeName(code));
  }
}

TEST(ErrorResponseTest, TheBodyHasExactlyTheVertexShape) {
  HttpResponse r =
      ErrorResponse(NotFound("CustomJob projects/1/locations/l/customJobs/9 not found"), "req-1");
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(r.content_type.find("application/json"), std::string::npos);
  nlohmann::json body = Body(r);
  ASSERT_TRUE(body.is_object());
  EXPECT_EQ(body.size(), 1u) << body.dump();
  ASSERT_TRUE(body.contains("error"));
  const nlohmann::json& error = body["error"];
  std::set<std::string> keys;
  for (const auto& [key, value] : error.items()) keys.insert(key);
  EXPECT_EQ(keys, (std::set<std::string>{"code", "message", "status", "details"}));
  EXPECT_EQ(error["code"], 404);
  EXPECT_EQ(error["message"], "CustomJob projects/1/locations/l/customJobs/9 not found");
  EXPECT_EQ(error["status"], "NOT_FOUND");
  EXPECT_TRUE(error["details"].is_array());
}

TEST(ErrorResponseTest, EveryDetailCarriesAnAtType) {
  Status with_violations = InvalidField("displayName", "must not be empty");
  with_violations.WithViolation("labels", "too many");
  for (const Status& s : {with_violations, NotFound("gone"), Internal("oops")}) {
    for (const std::string id : {"", "req-2"}) {
      nlohmann::json body = Body(ErrorResponse(s, id));
      ASSERT_FALSE(body["error"]["details"].empty()) << s.message();
      for (const auto& d : body["error"]["details"]) {
        ASSERT_TRUE(d.contains("@type")) << d.dump();
        EXPECT_EQ(d["@type"].get<std::string>().rfind("type.googleapis.com/google.rpc.", 0), 0u)
            << d.dump();
      }
    }
  }
}

TEST(ErrorResponseTest, FieldViolationsBecomeABadRequestDetailInOrder) {
  Status s = InvalidField("jobSpec.workerPoolSpecs[0].replicaCount", "must be 1");
  s.WithViolation("jobSpec.workerPoolSpecs[1].machineSpec.machineType", "unknown machine type");
  nlohmann::json body = Body(ErrorResponse(s, "req-3"));
  EXPECT_EQ(body["error"]["status"], "INVALID_ARGUMENT");
  nlohmann::json bad = DetailOfType(body, kBadRequest);
  ASSERT_FALSE(bad.is_null()) << body.dump();
  const nlohmann::json want = nlohmann::json::array(
      {{{"field", "jobSpec.workerPoolSpecs[0].replicaCount"}, {"description", "must be 1"}},
       {{"field", "jobSpec.workerPoolSpecs[1].machineSpec.machineType"},
        {"description", "unknown machine type"}}});
  EXPECT_EQ(bad["fieldViolations"], want);
}

TEST(ErrorResponseTest, NoViolationsMeansNoBadRequestDetail) {
  nlohmann::json body = Body(ErrorResponse(FailedPrecondition("job is done"), "req-4"));
  EXPECT_TRUE(DetailOfType(body, kBadRequest).is_null()) << body.dump();
  EXPECT_FALSE(DetailOfType(body, kErrorInfo).is_null()) << body.dump();
}

TEST(ErrorResponseTest, TheRequestIdIsInTheErrorInfoMetadata) {
  nlohmann::json body = Body(ErrorResponse(NotFound("gone"), "0123456789abcdef"));
  nlohmann::json info = DetailOfType(body, kErrorInfo);
  ASSERT_FALSE(info.is_null()) << body.dump();
  EXPECT_EQ(info["metadata"]["requestId"], "0123456789abcdef");
  EXPECT_EQ(info["domain"], "aiplatform.googleapis.com");
  EXPECT_TRUE(info["reason"].is_string());
}

TEST(ErrorResponseTest, WithoutARequestIdTheMetadataIsAnEmptyObject) {
  nlohmann::json body = Body(ErrorResponse(NotFound("gone"), ""));
  nlohmann::json info = DetailOfType(body, kErrorInfo);
  ASSERT_FALSE(info.is_null()) << body.dump();
  EXPECT_EQ(info["metadata"], nlohmann::json::object()) << "an object, never null or \"\"";
}

TEST(ErrorResponseTest, AMessageWithInvalidUtf8StillRendersAsJson) {
  // Messages quote client input; a stray byte must not throw while rendering the error.
  HttpResponse r = ErrorResponse(InvalidField("displayName", "bad byte \xff here"), "req-5");
  EXPECT_EQ(r.status, 400);
  nlohmann::json body = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(body.is_discarded()) << r.body;
  EXPECT_NE(body["error"]["message"].get<std::string>().find("bad byte"), std::string::npos);
}

}  // namespace
}  // namespace trainyard::api
