#include "api/request_target.h"

#include <gtest/gtest.h>

namespace trainyard::api {
namespace {

TEST(RequestTargetTest, DecodesThePathAndTheQueryAsClientsEncodeThem) {
  HttpRequest r;
  ASSERT_TRUE(
      ParseRequestTarget("/v1/projects/p%2Fq/jobs?filter=state%3D%22A%22+AND+x&pageSize=5", r));
  EXPECT_EQ(r.path, "/v1/projects/p/q/jobs");
  EXPECT_EQ(r.query.at("filter"), "state=\"A\" AND x");
  EXPECT_EQ(r.query.at("pageSize"), "5");
}

TEST(RequestTargetTest, APlusInThePathStaysAPlusAndAnEncodedPlusInTheQueryIsAPlus) {
  HttpRequest r;
  ASSERT_TRUE(ParseRequestTarget("/a+b?x=%2B1&y", r));
  EXPECT_EQ(r.path, "/a+b");
  EXPECT_EQ(r.query.at("x"), "+1");
  EXPECT_EQ(r.query.at("y"), "");
}

TEST(RequestTargetTest, TheLastOfARepeatedNameWinsAndEmptyPairsAreSkipped) {
  HttpRequest r;
  ASSERT_TRUE(ParseRequestTarget("/x?a=1&&a=2&", r));
  EXPECT_EQ(r.query.size(), 1u);
  EXPECT_EQ(r.query.at("a"), "2");
}

TEST(RequestTargetTest, AnAbsoluteTargetIsItsPathAndAFragmentIsDropped) {
  HttpRequest r;
  ASSERT_TRUE(ParseRequestTarget("http://host:8080/v1/x?a=b#frag", r));
  EXPECT_EQ(r.path, "/v1/x");
  EXPECT_EQ(r.query.at("a"), "b");
  HttpRequest bare;
  ASSERT_TRUE(ParseRequestTarget("https://host", bare));
  EXPECT_EQ(bare.path, "/");
}

TEST(RequestTargetTest, RefusesAnEscapeThatIsNotTwoHexDigits) {
  for (const char* target : {"/a%zz", "/a%2", "/a%", "/x?a=%g0", "/x?%=1"}) {
    HttpRequest r;
    EXPECT_FALSE(ParseRequestTarget(target, r)) << target;
  }
}

TEST(RequestTargetTest, PercentDecodeKeepsBytesAsSent) {
  EXPECT_EQ(PercentDecode("%E8%AE%AD%00x", false), std::string("\xE8\xAE\xAD\0x", 5));
  EXPECT_EQ(PercentDecode("a+b", false), "a+b");
  EXPECT_EQ(PercentDecode("a+b", true), "a b");
}

}  // namespace
}  // namespace trainyard::api
