#include "api/page_token.h"

#include <gtest/gtest.h>

namespace trainyard::api {
namespace {

TEST(PageTokenTest, RoundTripsTheKeysetPosition) {
  JobCursor cursor{FromUnixMicros(1'800'000'000'123'456), 1234567890123456789};
  std::string token = EncodePageToken(cursor, "state=JOB_STATE_RUNNING");
  auto decoded = DecodePageToken(token, "state=JOB_STATE_RUNNING");
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded->create_time, cursor.create_time);
  EXPECT_EQ(decoded->id, cursor.id);
  EXPECT_EQ(
      token.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
      std::string::npos)
      << "URL-safe without escaping";
}

TEST(PageTokenTest, ATokenFromAnotherFilterIsRefused) {
  std::string token = EncodePageToken({FromUnixMicros(1), 7}, "labels.team=a");
  auto decoded = DecodePageToken(token, "labels.team=b");
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().code(), Code::kInvalidArgument);
  ASSERT_EQ(decoded.status().violations().size(), 1u);
  EXPECT_EQ(decoded.status().violations()[0].field, "pageToken");
}

TEST(PageTokenTest, GarbageIsInvalidArgumentNeverACrash) {
  std::string good = EncodePageToken({FromUnixMicros(1), 7}, "");
  for (const std::string& bad :
       {std::string("not a token!"), std::string("page-2"), good.substr(0, good.size() / 2),
        std::string(600, 'A'), std::string("\0\0", 2), std::string("e30")}) {
    auto decoded = DecodePageToken(bad, "");
    ASSERT_FALSE(decoded.ok()) << bad;
    EXPECT_EQ(decoded.status().code(), Code::kInvalidArgument) << bad;
  }
}

TEST(PageTokenTest, NodeTokensRoundTripAndStayWithTheirFilters) {
  NodeCursor cursor{"us-central1-b/a3-highgpu-8g/RESERVATION/r-a3h-uc1b", 7};
  std::string token = EncodeNodePageToken(cursor, "|us-central1-b|READY");
  auto decoded = DecodeNodePageToken(token, "|us-central1-b|READY");
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded->pool_id, cursor.pool_id);
  EXPECT_EQ(decoded->ordinal, 7);
  auto other = DecodeNodePageToken(token, "||READY");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().violations().at(0).field, "pageToken");
  EXPECT_FALSE(DecodeNodePageToken(EncodePageToken({FromUnixMicros(1), 7}, ""), "").ok())
      << "a customJobs token is not a node token";
  EXPECT_FALSE(DecodeNodePageToken("e30", "").ok());
}

}  // namespace
}  // namespace trainyard::api
