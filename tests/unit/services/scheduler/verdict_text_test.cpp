#include "services/scheduler/verdict_text.h"

#include <gtest/gtest.h>

#include <ctime>
#include <random>
#include <string>
#include <vector>

namespace trainyard {
namespace {

std::string Strftime(int64_t secs, bool seconds) {
  const std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), seconds ? "%Y-%m-%d %H:%M:%S UTC" : "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

// ClockText writes dates by hand: every one as strftime writes it, leap days and centuries too.
TEST(VerdictTextTest, ClockTextIsStrftimes) {
  std::mt19937_64 rng(51);
  std::uniform_int_distribution<int64_t> any(0, 253402300799);  // to 9999-12-31 23:59:59
  std::vector<int64_t> times = {0,          59,           86399,       951782400,
                                951868800,  4107542399,   4107542400,  1767225600,
                                1709164800, 253402300799, 253402300800};
  for (int i = 0; i < 20000; ++i) times.push_back(any(rng));
  for (int64_t secs : times) {
    const Timestamp t = FromUnixMicros(secs * 1'000'000 + 999'999);
    EXPECT_EQ(ClockText(t), Strftime(secs, false)) << secs;
    EXPECT_EQ(ClockText(t, /*seconds=*/true), Strftime(secs, true)) << secs;
  }
}

}  // namespace
}  // namespace trainyard
