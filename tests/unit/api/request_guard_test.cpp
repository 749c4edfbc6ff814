// The guard's reading of Host and Origin, which a hostile page controls byte for byte.
#include <gtest/gtest.h>

#include "api/request_guard.h"

namespace trainyard::api {
namespace {

TEST(RequestGuardTest, ReadsTheHostOfAnAuthority) {
  EXPECT_EQ(HostOfAuthority("127.0.0.1:8080"), "127.0.0.1");
  EXPECT_EQ(HostOfAuthority("LocalHost"), "localhost");
  EXPECT_EQ(HostOfAuthority("[::1]:8080"), "::1");
  EXPECT_EQ(HostOfAuthority("[::1]"), "::1");
  EXPECT_EQ(HostOfAuthority(""), "");
  EXPECT_EQ(HostOfAuthority("a b"), "");
  EXPECT_EQ(HostOfAuthority("host:port"), "");
  EXPECT_EQ(HostOfAuthority("[::1"), "");
  EXPECT_EQ(HostOfAuthority("[::1]x"), "");
  EXPECT_EQ(HostOfAuthority("user@127.0.0.1"), "");
}

TEST(RequestGuardTest, KnowsLoopbackNamesFromLookAlikes) {
  for (const char* host : {"localhost", "app.localhost", "127.0.0.1", "127.255.0.9", "::1"}) {
    EXPECT_TRUE(IsLoopbackName(host)) << host;
  }
  for (const char* host : {"127.0.0.1.evil.example", "127.1", "127.0.0.256", "localhost.evil",
                           "10.0.0.1", "0.0.0.0", "::", "127..0.1", "127.0.0.1."}) {
    EXPECT_FALSE(IsLoopbackName(host)) << host;
  }
}

TEST(RequestGuardTest, AGetWithoutBodyNeedsNoContentType) {
  HttpRequest get;
  get.method = "GET";
  get.headers["host"] = "127.0.0.1:8080";
  EXPECT_FALSE(GuardRequest(get, {true, {}}).has_value());
}

TEST(RequestGuardTest, AnOriginMatchesItsHostWithOrWithoutTheDefaultPort) {
  HttpRequest request;
  request.method = "POST";
  request.headers["host"] = "trainyard.example.com";
  request.headers["origin"] = "https://trainyard.example.com:443";
  EXPECT_FALSE(GuardRequest(request, {}).has_value());
  request.headers["origin"] = "https://trainyard.example.com.evil.example";
  auto refused = GuardRequest(request, {});
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->http_status, 403);
  EXPECT_NE(refused->status.message().find("Origin"), std::string::npos);
}

}  // namespace
}  // namespace trainyard::api
