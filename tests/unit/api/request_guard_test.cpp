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

// A POST a page at `origin` makes a browser send to the server at `host`.
HttpRequest FromPage(const std::string& origin, const std::string& host) {
  HttpRequest request;
  request.method = "POST";
  request.headers["host"] = host;
  request.headers["origin"] = origin;
  return request;
}

RequestGuardOptions OverHttps() {
  RequestGuardOptions options;
  options.tls = true;
  return options;
}

TEST(RequestGuardTest, AnOriginMatchesItsHostWithOrWithoutTheDefaultPort) {
  HttpRequest request = FromPage("https://trainyard.example.com:443", "trainyard.example.com");
  EXPECT_FALSE(GuardRequest(request, OverHttps()).has_value());
  EXPECT_FALSE(GuardRequest(FromPage("https://h", "h:443"), OverHttps()).has_value());
  EXPECT_FALSE(GuardRequest(FromPage("http://h:80", "h"), {}).has_value());
  request.headers["origin"] = "https://trainyard.example.com.evil.example";
  auto refused = GuardRequest(request, OverHttps());
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->http_status, 403);
  EXPECT_NE(refused->status.message().find("Origin"), std::string::npos);
}

// Same host and port, other scheme: another origin. Whoever can answer plain HTTP for the name
// (someone on the network) must not get to call the HTTPS server from a browser, nor the reverse.
TEST(RequestGuardTest, AnOriginOfTheOtherSchemeIsAnotherSite) {
  auto refused = GuardRequest(
      FromPage("http://trainyard.example.com:8443", "trainyard.example.com:8443"), OverHttps());
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->http_status, 403);
  EXPECT_NE(refused->status.message().find("at https://trainyard.example.com:8443"),
            std::string::npos)
      << refused->status.message();
  EXPECT_FALSE(
      GuardRequest(FromPage("https://trainyard.example.com:8443", "trainyard.example.com:8443"),
                   OverHttps())
          .has_value());

  EXPECT_TRUE(GuardRequest(FromPage("https://127.0.0.1:8080", "127.0.0.1:8080"), {}).has_value());
  EXPECT_FALSE(GuardRequest(FromPage("http://127.0.0.1:8080", "127.0.0.1:8080"), {}).has_value());
  // The default ports belong to their own scheme only: :443 spoken as plain HTTP stays a port.
  EXPECT_TRUE(GuardRequest(FromPage("https://h", "h:443"), {}).has_value());
  EXPECT_FALSE(GuardRequest(FromPage("http://h:443", "h:443"), {}).has_value());
}

// Behind a proxy that ends TLS (the shipped nginx file) the listener speaks HTTP; the proxy's
// X-Forwarded-Proto says how the browser reached it.
TEST(RequestGuardTest, BehindAProxyTheSchemeIsTheOneItForwards) {
  HttpRequest request = FromPage("https://trainyard.example.com", "trainyard.example.com");
  EXPECT_TRUE(GuardRequest(request, {}).has_value()) << "no proxy said it was https";
  request.headers["x-forwarded-proto"] = "https";
  EXPECT_FALSE(GuardRequest(request, {}).has_value());
  request.headers["x-forwarded-proto"] = "HTTPS, http";  // the first proxy's, the client's
  EXPECT_FALSE(GuardRequest(request, {}).has_value());
  request.headers["origin"] = "http://trainyard.example.com";
  EXPECT_TRUE(GuardRequest(request, {}).has_value());
  request.headers["x-forwarded-proto"] = "http";
  EXPECT_FALSE(GuardRequest(request, OverHttps()).has_value())
      << "the proxy's word wins over the listener's own";
}

}  // namespace
}  // namespace trainyard::api
