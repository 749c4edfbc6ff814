#include "services/whatif/whatif_service.h"

#include <gtest/gtest.h>

#include <future>

namespace trainyard {
namespace {

const Timestamp kT0 = FromUnixMicros(1'800'000'000'000'000);

// A runner whose runs wait for the test to let them finish (or for a cancel), so "under way" is a
// state the test holds.
struct HeldRunner : WhatIfRunner {
  std::promise<StatusOr<WhatIfOutput>> finish;
  std::shared_future<StatusOr<WhatIfOutput>> result = finish.get_future().share();
  std::vector<std::string> asked;
  Status refuse;  // not OK: Stage refuses with it

  struct Held : WhatIfExecution {
    HeldRunner* runner;
    std::promise<void> cancelled;
    std::shared_future<void> cancel_seen = cancelled.get_future().share();
    explicit Held(HeldRunner* r) : runner(r) {}
    StatusOr<WhatIfOutput> Run(const std::function<void(std::string)>& progress) override {
      progress("day 1.0");
      while (runner->result.wait_for(std::chrono::milliseconds(1)) != std::future_status::ready) {
        if (cancel_seen.wait_for(std::chrono::milliseconds(0)) == std::future_status::ready) {
          return Status(Code::kCancelled, "cancelled");
        }
      }
      return runner->result.get();
    }
    void Cancel() override { cancelled.set_value(); }
  };

  StatusOr<std::unique_ptr<WhatIfExecution>> Stage(const std::vector<std::string>& scenarios,
                                                   const std::optional<WhatIfUpload>&,
                                                   std::optional<uint64_t>) override {
    if (!refuse.ok()) return refuse;
    asked = scenarios;
    return std::unique_ptr<WhatIfExecution>(new Held(this));
  }
};

// The service owns its runner; the test keeps a pointer to steer it.
std::unique_ptr<HeldRunner> NewRunner(HeldRunner** keep) {
  auto runner = std::make_unique<HeldRunner>();
  *keep = runner.get();
  return runner;
}

TEST(WhatIfServiceTest, ARunGoesInTheBackgroundOneAtATimeAndKeepsItsOutput) {
  HeldRunner* runner = nullptr;
  WhatIfService whatif({"on-demand", "spot-fallback"}, NewRunner(&runner), [] { return kT0; });
  HeldRunner& held = *runner;
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

TEST(WhatIfServiceTest, ACancelEndsTheRunUnderWayAsCancelledAndAnEndedRunCannotBeCancelled) {
  HeldRunner* runner = nullptr;
  WhatIfService whatif({"on-demand"}, NewRunner(&runner), [] { return kT0; });
  auto run = whatif.Start({"on-demand"}, std::nullopt);
  ASSERT_TRUE(run.ok());
  auto cancelling = whatif.Cancel(run->id);
  ASSERT_TRUE(cancelling.ok()) << cancelling.status().message();
  whatif.Join();
  auto done = whatif.Get(run->id);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->state, WhatIfRun::State::kCancelled);
  EXPECT_EQ(done->error.code(), Code::kCancelled);
  EXPECT_EQ(whatif.Cancel(run->id).status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(whatif.Cancel(77).status().code(), Code::kNotFound);
  EXPECT_TRUE(whatif.Start({"on-demand"}, std::nullopt).ok()) << "a cancelled run frees the slot";
}

TEST(WhatIfServiceTest, AnUploadTheRunnerRefusesIsABadRequestAndLeavesNoRun) {
  HeldRunner* runner = nullptr;
  WhatIfService whatif({"on-demand"}, NewRunner(&runner), [] { return kT0; });
  runner->refuse = InvalidField("upload.scenario.name", "must be a plain name");
  auto refused = whatif.Start({}, std::nullopt, WhatIfUpload{"{}", "a,b\n", "mine.csv"});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().violations().front().field, "upload.scenario.name");
  EXPECT_EQ(whatif.Get(1).status().code(), Code::kNotFound) << "nothing half-made";
  runner->refuse = Status::Ok();
  EXPECT_TRUE(whatif.Start({"on-demand"}, std::nullopt).ok()) << "a refusal holds no slot";
}

TEST(WhatIfServiceTest, ShuttingDownCancelsARunThatWouldNeverEnd) {
  HeldRunner* runner = nullptr;
  auto whatif = std::make_unique<WhatIfService>(std::vector<std::string>{"on-demand"},
                                                NewRunner(&runner), [] { return kT0; });
  ASSERT_TRUE(whatif->Start({"on-demand"}, std::nullopt).ok());
  whatif.reset();  // returns only because the destructor cancels the run (it never finishes)
  SUCCEED();
}

TEST(WhatIfServiceTest, ARunnerErrorIsTheRunsAndBadNamesAreRefusedNamingTheEntry) {
  HeldRunner* runner = nullptr;
  WhatIfService whatif({"on-demand"}, NewRunner(&runner), [] { return kT0; });
  HeldRunner& held = *runner;
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
