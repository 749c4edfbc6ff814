// Request bodies: empty bodies, the "" body of custom verbs, non-objects, bad JSON and depth.
#include "api/json_body.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace trainyard::api {
namespace {

StatusOr<nlohmann::json> Parse(const std::string& body, bool allow_empty) {
  HttpRequest r;
  r.method = "POST";
  r.body = body;
  return ParseJsonBody(r, allow_empty);
}

// An object `depth` levels deep: {"a":{"a":…{}…}}.
std::string NestedObjects(int depth) {
  std::string out;
  for (int i = 1; i < depth; ++i) out += "{\"a\":";
  out += "{}";
  out += std::string(depth - 1, '}');
  return out;
}

TEST(ParseJsonBodyTest, AnEmptyBodyIsAnEmptyObjectOnlyWhereAllowed) {
  for (const std::string body : {"", " ", "\r\n\t "}) {
    auto allowed = Parse(body, /*allow_empty=*/true);
    ASSERT_TRUE(allowed.ok()) << "[" << body << "] " << allowed.status().message();
    EXPECT_EQ(*allowed, nlohmann::json::object());
    auto refused = Parse(body, /*allow_empty=*/false);
    ASSERT_FALSE(refused.ok()) << "[" << body << "]";
    EXPECT_EQ(refused.status().code(), Code::kInvalidArgument);
  }
}

TEST(ParseJsonBodyTest, TheEmptyJsonStringIsAnEmptyBodyForCustomVerbs) {
  auto verb = Parse("\"\"", /*allow_empty=*/true);
  ASSERT_TRUE(verb.ok()) << verb.status().message();
  EXPECT_EQ(*verb, nlohmann::json::object());
  auto create = Parse("\"\"", /*allow_empty=*/false);
  ASSERT_FALSE(create.ok()) << "a create body must be an object";
  EXPECT_EQ(create.status().code(), Code::kInvalidArgument);
  auto text = Parse("\"x\"", /*allow_empty=*/true);
  ASSERT_FALSE(text.ok()) << "only the empty string stands for an empty body";
  EXPECT_EQ(text.status().code(), Code::kInvalidArgument);
}

TEST(ParseJsonBodyTest, AnythingButAnObjectIsRefused) {
  for (const std::string body : {"[]", "[{}]", "1", "-0.5", "null", "true", "\"abc\""}) {
    for (bool allow_empty : {false, true}) {
      auto parsed = Parse(body, allow_empty);
      ASSERT_FALSE(parsed.ok()) << body << " allow_empty=" << allow_empty;
      EXPECT_EQ(parsed.status().code(), Code::kInvalidArgument) << body;
    }
  }
}

TEST(ParseJsonBodyTest, InvalidJsonIsRefused) {
  for (const std::string body : {"{", "{\"a\":", "{\"a\":}", "{'a':1}", "{\"a\":1,}", "{} {}",
                                 "{\"a\":1}x", "displayName=x", "{\"a\":\"\xff\"}"}) {
    auto parsed = Parse(body, /*allow_empty=*/true);
    ASSERT_FALSE(parsed.ok()) << body;
    EXPECT_EQ(parsed.status().code(), Code::kInvalidArgument) << body;
  }
}

TEST(ParseJsonBodyTest, AnObjectComesBackAsSent) {
  auto parsed = Parse(R"( {"displayName":"x","labels":{"a":"b"},"n":[1,2]} )", false);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(*parsed, (nlohmann::json{{"displayName", "x"},
                                     {"labels", {{"a", "b"}}},
                                     {"n", nlohmann::json::array({1, 2})}}));
}

TEST(ParseJsonBodyTest, DepthUpToTheLimitIsAcceptedOneMoreIsRefused) {
  auto at_limit = Parse(NestedObjects(kMaxJsonDepth), false);
  EXPECT_TRUE(at_limit.ok()) << at_limit.status().message();
  auto over = Parse(NestedObjects(kMaxJsonDepth + 1), false);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), Code::kInvalidArgument);

  // Arrays count as levels too: one object holding 63 nested arrays is 64 deep.
  std::string arrays_at_limit =
      "{\"a\":" + std::string(kMaxJsonDepth - 1, '[') + std::string(kMaxJsonDepth - 1, ']') + "}";
  EXPECT_TRUE(Parse(arrays_at_limit, false).ok());
  std::string arrays_over =
      "{\"a\":" + std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']') + "}";
  EXPECT_FALSE(Parse(arrays_over, false).ok());
}

TEST(ParseJsonBodyTest, BracketsInsideStringsDoNotCount) {
  std::string body = "{\"a\":\"" + std::string(1000, '[') + "\\\"" + std::string(1000, '{') + "\"}";
  auto parsed = Parse(body, false);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->at("a").get<std::string>().size(), 2001u);
}

TEST(ParseJsonBodyTest, AHostileDeepBodyIsRefusedWithoutCrashing) {
  for (const std::string& body :
       {std::string(200000, '['), std::string(200000, '{'), "{\"a\":" + std::string(100000, '[')}) {
    auto parsed = Parse(body, true);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.status().code(), Code::kInvalidArgument);
  }
}

}  // namespace
}  // namespace trainyard::api
