// PollUntilDone, the loop under Client::WaitJob/WaitOperation, on a fake clock.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sdk/poll.h"
#include "tests/unit/sdk/sdk_fake_timing.h"

namespace trainyard::sdk {
namespace {

using std::chrono::milliseconds;

// A resource whose readings are scripted; "done" ends the wait.
struct Scripted {
  std::vector<std::string> readings;
  size_t next = 0;
  PollHooks<std::string> Hooks() {
    PollHooks<std::string> hooks;
    hooks.fetch = [this]() -> StatusOr<std::string> {
      const std::string& r = readings[std::min(next, readings.size() - 1)];
      ++next;
      if (r == "error") return NotFound("gone");
      return r;
    };
    hooks.done = [](const std::string& r) { return r == "done"; };
    hooks.change_key = [](const std::string& r) { return r; };
    hooks.describe = [](const std::string& r) { return "still " + r; };
    return hooks;
  }
};

TEST(SdkPollTest, PollsWithTheBackoffScheduleAndReportsEachChangeOnce) {
  FakeTiming time;
  Scripted script{{"queued", "queued", "running", "running", "running", "done"}};
  std::vector<std::string> changes;
  WaitOptionsFor<std::string> options;
  options.on_change = [&](const std::string& r) { changes.push_back(r); };

  auto result = PollUntilDone(time.Get(), options, script.Hooks());
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(*result, "done");
  EXPECT_EQ(changes, (std::vector<std::string>{"queued", "running", "done"}));
  EXPECT_EQ(time.sleeps_ms, (std::vector<int64_t>{1000, 1500, 2250, 3375, 5063}));
}

TEST(SdkPollTest, TheDeadlineEndsTheWaitWithoutOvershooting) {
  FakeTiming time;
  Scripted script{{"running"}};
  WaitOptionsFor<std::string> options;
  options.timeout = milliseconds(4000);

  auto result = PollUntilDone(time.Get(), options, script.Hooks());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), Code::kDeadlineExceeded);
  EXPECT_EQ(result.status().message(), "timed out after 4.0s: still running");
  // 1000 + 1500, then the last sleep is cut to the 1500 ms left instead of 2250.
  EXPECT_EQ(time.sleeps_ms, (std::vector<int64_t>{1000, 1500, 1500}));
  EXPECT_EQ(script.next, 4u);  // read once more at the deadline itself
}

TEST(SdkPollTest, AFetchErrorEndsTheWait) {
  FakeTiming time;
  Scripted script{{"queued", "error"}};
  auto result = PollUntilDone(time.Get(), WaitOptionsFor<std::string>{}, script.Hooks());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace trainyard::sdk
