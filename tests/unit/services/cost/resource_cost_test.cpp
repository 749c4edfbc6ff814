#include "services/cost/resource_cost.h"

#include <gtest/gtest.h>

namespace trainyard::cost {
namespace {

using std::chrono::hours;
using std::chrono::minutes;

const Timestamp kT0 = FromUnixMicros(1'700'000'000'000'000);

TEST(ResourceCostTest, AResourceCostsItsPriceWhileItHoldsNodes) {
  EXPECT_EQ(HoldCostMicros(10'000'000, kT0, kT0 + hours(3)), 30'000'000) << "$10 an hour, 3 h";
  EXPECT_EQ(HoldCostMicros(10'000'000, std::nullopt, kT0 + hours(3)), 0) << "no nodes held yet";
  EXPECT_EQ(HoldCostMicros(10'000'000, kT0, kT0), 0);
  EXPECT_EQ(HoldCostMicros(10'000'000, kT0 + minutes(1), kT0), 0) << "nothing before it holds";
  EXPECT_EQ(HoldCostMicros(1, kT0, kT0 + minutes(30)), 1) << "rounded as a job's cost is";
}

// A resize closes the hold at the old price and opens one at the new; the resource's cost is
// every hold's.
TEST(ResourceCostTest, AResizeBillsTheOldPriceUpToItAndTheNewOneAfter) {
  const Timestamp resized = kT0 + hours(1);
  const int64_t earlier = HoldCostMicros(10'000'000, kT0, resized);
  EXPECT_EQ(earlier, 10'000'000);
  EXPECT_EQ(ResourceCostMicros(earlier, 20'000'000, resized, kT0 + hours(3)), 50'000'000)
      << "$10 for the first hour, $20 an hour for the next two";
  EXPECT_EQ(ResourceCostMicros(earlier, 20'000'000, std::nullopt, kT0 + hours(3)), earlier)
      << "a resource that holds nothing now keeps what it cost";
}

}  // namespace
}  // namespace trainyard::cost
