// The scheduler's knobs by name, as a scenario's "scheduler" object and serve's --scheduler give
// them: each sets its field, and a value it does not take is refused with what it must be.
#include "services/scheduler/scheduler_knobs.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

using namespace std::chrono_literals;

TEST(SchedulerKnobTest, EachKnobSetsItsField) {
  SchedulerConfig config;
  EXPECT_EQ(SetSchedulerKnob(config, "holdAfter", "0s"), std::nullopt);
  EXPECT_EQ(SetSchedulerKnob(config, "holdsPerCycle", "1"), std::nullopt);
  EXPECT_EQ(SetSchedulerKnob(config, "requeueTimestamp", "Eviction"), std::nullopt);
  EXPECT_EQ(config.reserve_min_wait, Duration(0s));
  EXPECT_EQ(config.max_reservations, 1);
  EXPECT_EQ(config.requeue_timestamp, RequeueTimestamp::kEviction);
  EXPECT_EQ(SetSchedulerKnob(config, "requeueTimestamp", "Creation"), std::nullopt);
  EXPECT_EQ(config.requeue_timestamp, RequeueTimestamp::kCreation);
  EXPECT_EQ(SetSchedulerKnob(config, "holdsPerCycle", "1000"), std::nullopt);
  EXPECT_EQ(config.max_reservations, 1000);
}

TEST(SchedulerKnobTest, AValueAKnobDoesNotTakeIsRefusedAndChangesNothing) {
  const std::pair<const char*, const char*> bad[] = {
      {"holdAfter", "soon"},  {"holdAfter", "-5s"},          {"holdAfter", ""},
      {"holdsPerCycle", "0"}, {"holdsPerCycle", "1001"},     {"holdsPerCycle", "3x"},
      {"holdsPerCycle", ""},  {"requeueTimestamp", "Later"}, {"requeueTimestamp", "eviction"},
  };
  for (const auto& [name, text] : bad) {
    SchedulerConfig config;
    auto wrong = SetSchedulerKnob(config, name, text);
    ASSERT_TRUE(wrong.has_value()) << name << "=" << text;
    EXPECT_EQ(wrong->rfind("must be", 0), 0u) << *wrong;
    EXPECT_EQ(config.reserve_min_wait, SchedulerConfig{}.reserve_min_wait);
    EXPECT_EQ(config.max_reservations, SchedulerConfig{}.max_reservations);
    EXPECT_EQ(config.requeue_timestamp, SchedulerConfig{}.requeue_timestamp);
  }
}

TEST(SchedulerKnobTest, AnUnknownNameIsRefusedListingTheKnobs) {
  SchedulerConfig config;
  auto wrong = SetSchedulerKnob(config, "lookback", "5");
  ASSERT_TRUE(wrong.has_value());
  EXPECT_NE(wrong->find("holdAfter, holdsPerCycle, requeueTimestamp"), std::string::npos) << *wrong;
  EXPECT_EQ(config.lookback, SchedulerConfig{}.lookback);
}

}  // namespace
}  // namespace trainyard
