#include "api/console_handler.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace trainyard::api {
namespace {

HttpRequest Get(std::string path, std::map<std::string, std::string> headers = {}) {
  HttpRequest r;
  r.method = "GET";
  r.path = std::move(path);
  r.headers = std::move(headers);
  return r;
}

std::string HeaderOf(const HttpResponse& r, std::string_view name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return "";
}

TEST(ConsoleHandlerTest, TheIndexComesWithItsETagAndAPolicyThatLoadsNothingFromElsewhere) {
  auto index = ServeConsole(Get("/console/"));
  ASSERT_TRUE(index);
  EXPECT_EQ(index->status, 200);
  EXPECT_EQ(index->content_type, "text/html; charset=utf-8");
  EXPECT_NE(index->body.find("<script type=\"module\" src=\"app.js\">"), std::string::npos);
  EXPECT_NE(HeaderOf(*index, "ETag"), "");
  EXPECT_NE(HeaderOf(*index, "Content-Security-Policy").find("default-src 'self'"),
            std::string::npos);
  EXPECT_EQ(HeaderOf(*index, "X-Content-Type-Options"), "nosniff");

  auto again = ServeConsole(Get("/console/", {{"if-none-match", HeaderOf(*index, "ETag")}}));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 304) << "a browser that has it revalidates and gets no body";
  EXPECT_TRUE(again->body.empty());
}

TEST(ConsoleHandlerTest, GzipWhenAskedRawOtherwise) {
  auto raw = ServeConsole(Get("/console/app.js"));
  ASSERT_TRUE(raw);
  EXPECT_EQ(raw->content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(HeaderOf(*raw, "Content-Encoding"), "");
  auto zipped = ServeConsole(Get("/console/app.js", {{"accept-encoding", "gzip, deflate, br"}}));
  ASSERT_TRUE(zipped);
  EXPECT_EQ(HeaderOf(*zipped, "Content-Encoding"), "gzip");
  ASSERT_GE(zipped->body.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(zipped->body[0]), 0x1f) << "the gzip magic";
  EXPECT_EQ(static_cast<unsigned char>(zipped->body[1]), 0x8b);
  EXPECT_LT(zipped->body.size(), raw->body.size() / 2);
  EXPECT_EQ(HeaderOf(*zipped, "Vary"), "Accept-Encoding");
}

TEST(ConsoleHandlerTest, TheBarePathRedirectsAndOthersAreNotTheConsoles) {
  auto bare = ServeConsole(Get("/console"));
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->status, 301);
  EXPECT_EQ(HeaderOf(*bare, "Location"), "/console/");
  auto missing = ServeConsole(Get("/console/../../etc/passwd"));
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404) << "only the embedded files, by exact name";
  EXPECT_FALSE(ServeConsole(Get("/v1/projects/demo/locations/us-central1/customJobs")));
  HttpRequest post = Get("/console/");
  post.method = "POST";
  EXPECT_FALSE(ServeConsole(post)) << "left to the router, which refuses it";
}

}  // namespace
}  // namespace trainyard::api
