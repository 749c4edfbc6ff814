#include "services/scheduler/reservation_memo.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

using CM = ConsumptionModel;

std::optional<Reservation> At(int64_t start_s) {
  Reservation r;
  r.zone = "us-central1-b";
  r.hold.job_id = 7;
  r.hold.start = FromUnixMicros(start_s * 1'000'000);
  r.hold.slack = {{0, 2}};
  return r;
}

TEST(ReservationMemoTest, AnswersOnlyTheSameShapeCycleCapacityAndFlavors) {
  ReservationMemo memo;
  const std::vector<CM> both = {CM::kReservation, CM::kOnDemand};
  EXPECT_EQ(memo.Find(1, 10, 0, both), nullptr);
  memo.Remember(1, 10, 2, both, At(3600), 4);
  const std::optional<Reservation>* found = memo.Find(1, 10, 2, both);
  ASSERT_NE(found, nullptr);
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->hold.start, FromUnixMicros(3600'000'000));
  EXPECT_EQ(memo.Find(2, 10, 2, both), nullptr);  // the next cycle
  EXPECT_EQ(memo.Find(1, 11, 2, both), nullptr);  // capacity moved
  EXPECT_EQ(memo.Find(1, 10, 1, both), nullptr);  // another shape
  EXPECT_EQ(memo.Find(1, 10, 99, both), nullptr);
  const std::vector<CM> on_demand = {CM::kOnDemand};  // quota left fewer flavors
  EXPECT_EQ(memo.Find(1, 10, 2, on_demand), nullptr);
}

TEST(ReservationMemoTest, RemembersThatNothingFits) {
  ReservationMemo memo;
  const std::vector<CM> on_demand = {CM::kOnDemand};
  memo.Remember(1, 0, 0, on_demand, std::nullopt, 1);
  const std::optional<Reservation>* found = memo.Find(1, 0, 0, on_demand);
  ASSERT_NE(found, nullptr);
  EXPECT_FALSE(found->has_value());
  memo.Clear();
  EXPECT_EQ(memo.Find(1, 0, 0, on_demand), nullptr);
}

}  // namespace
}  // namespace trainyard
