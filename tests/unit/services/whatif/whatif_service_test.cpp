#include "services/whatif/whatif_service.h"

#include <gtest/gtest.h>

#include <future>

namespace trainyard {
namespace {

const Timestamp kT0 = FromUnixMicros(1'800'000'000'000'000);

// A runner that waits for the test to let it finish, so "under way" is a state the test holds.
struct HeldRunner {
  std::promise<StatusOr<WhatIfOutput>> finish;
  std::shared_future<StatusOr<WhatIfOutput>> result = finish.get_future().share();
  std::vector<std::string> asked;
  WhatIfRunner Runner() {
    return [this](const std::vector<std::string>& scenarios, const std::optional<WhatIfUpload>&,
                  std::optional<uint64_t>, const std::function<void(std::string)>& progress) {
      asked = scenarios;
      progress("day 1.0");
      return result.get();
    };
  }
};

TEST(WhatIfServiceTest, ARunGoesInTheBackgroundOneAtATimeAndKeepsItsOutput) {
  HeldRunner held;
  WhatIfService whatif({"on-demand", "spot-fallback"}, held.Runner(), [] { return kT0; });
  auto run = whatif.Start({"on-demand", "spot-fallback"}, 7);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->state, WhatIfRun::State::kRunning);
  EXPECT_EQ(run->seed, 7u);

  auto second = whatif.Start({"on-demand"}, std::nullopt);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Code::kResourceExhausted) << "one run at a time";

  WhatIfOutput output;
  output.comparison_json = R"({"scenarios": []})";
  output.plots["wait_cdf.svg"] = "<svg/>";
  held.finish.set_value(output);
  whatif.Join();
  auto done = whatif.Get(run->id);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->state, WhatIfRun::State::kSucceeded);
  EXPECT_EQ(done->output.plots.at("wait_cdf.svg"), "<svg/>");
  EXPECT_EQ(held.asked, (std::vector<std::string>{"on-demand", "spot-fallback"}));
  EXPECT_TRUE(whatif.Start({"on-demand"}, std::nullopt).ok()) << "the next may start now";
}

TEST(WhatIfServiceTest, ARunnerErrorIsTheRunsAndBadNamesAreRefusedNamingTheEntry) {
  HeldRunner held;
  WhatIfService whatif({"on-demand"}, held.Runner(), [] { return kT0; });
  auto unknown = whatif.Start({"on-demand", "nope"}, std::nullopt);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(unknown.status().violations().front().field, "scenarios[1]");
  EXPECT_FALSE(whatif.Start({}, std::nullopt).ok()) << "at least one";
  auto traversal = whatif.Start({}, std::nullopt, WhatIfUpload{"{}", "a,b\n", "../../etc/passwd"});
  ASSERT_FALSE(traversal.ok());
  EXPECT_EQ(traversal.status().violations().front().field, "upload.traceName");
  EXPECT_FALSE(whatif.Start({"on-demand", "on-demand"}, std::nullopt).ok()) << "no repeats";

  auto run = whatif.Start({"on-demand"}, std::nullopt);
  ASSERT_TRUE(run.ok());
  held.finish.set_value(InvalidArgument("trace.csv:2: not a number"));
  whatif.Join();
  auto failed = whatif.Get(run->id);
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(failed->state, WhatIfRun::State::kFailed);
  EXPECT_EQ(failed->error.message(), "trace.csv:2: not a number");
  EXPECT_EQ(whatif.Get(999).status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace trainyard
