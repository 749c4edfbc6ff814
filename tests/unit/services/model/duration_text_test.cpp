// google.protobuf.Duration in its proto3 JSON form: "3600s", "1.5s", "0.000001s".
#include "services/model/duration_text.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>

namespace trainyard {
namespace {

using std::chrono::hours;
using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

TEST(DurationTextTest, ParsesWholeAndFractionalSeconds) {
  EXPECT_EQ(ParseDurationText("3600s"), Duration(hours(1)));
  EXPECT_EQ(ParseDurationText("0s"), Duration(0));
  EXPECT_EQ(ParseDurationText("1.5s"), Duration(milliseconds(1500)));
  EXPECT_EQ(ParseDurationText("0.000001s"), Duration(microseconds(1)));
  EXPECT_EQ(ParseDurationText("0.000000001s"), Duration(nanoseconds(1)));
  EXPECT_EQ(ParseDurationText("1.123456789s"), Duration(nanoseconds(1'123'456'789)));
  EXPECT_EQ(ParseDurationText("604800s"), Duration(hours(24 * 7)));
}

TEST(DurationTextTest, FractionDigitsAreScaledByTheirPosition) {
  EXPECT_EQ(ParseDurationText("1.1s"), Duration(milliseconds(1100)));
  EXPECT_EQ(ParseDurationText("2.05s"), Duration(milliseconds(2050)));
  EXPECT_EQ(ParseDurationText("0.500s"), Duration(milliseconds(500)));
  EXPECT_EQ(ParseDurationText("007s"), Duration(seconds(7)));
}

TEST(DurationTextTest, RefusesWhatIsNotADurationString) {
  for (const std::string text :
       {"",     "s",    "1",     "1.5",    "10m",           "1h",  "-1s", "+1s",
        ".5s",  "1.s",  "1..5s", "1.5.0s", "1.0000000001s", " 1s", "1s ", "1 s",
        "1e3s", "abcs", "1,5s",  "0x10s",  "1ss",           "ss"}) {
    EXPECT_FALSE(ParseDurationText(text).has_value()) << "[" << text << "]";
  }
}

TEST(DurationTextTest, ACenturyParsesExactly) {
  const int64_t century = int64_t{100} * 365 * 24 * 3600;
  auto d = ParseDurationText(std::to_string(century) + ".25s");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(*d, Duration(seconds(century)) + Duration(milliseconds(250)));
}

TEST(DurationTextTest, AHugeValueIsRefusedOrExactNeverWrapped) {
  // Beyond google.protobuf.Duration's own range (315,576,000,000 s): always refused.
  EXPECT_FALSE(ParseDurationText("315576000001s").has_value());
  EXPECT_FALSE(ParseDurationText("3155760000009s").has_value());
  EXPECT_FALSE(ParseDurationText("99999999999999999999999s").has_value());
  // Inside the proto's range but beyond what Duration can hold: refused, or exactly right.
  for (int64_t secs : {int64_t{9'223'372'037}, int64_t{10'000'000'000}, int64_t{315'576'000'000}}) {
    auto d = ParseDurationText(std::to_string(secs) + "s");
    if (!d) continue;
    EXPECT_GE(d->count(), 0) << secs << "s wrapped around";
    EXPECT_EQ(std::chrono::duration_cast<seconds>(*d).count(), secs) << secs;
  }
}

}  // namespace
}  // namespace trainyard
