#include "services/cost/accrual.h"

#include <gtest/gtest.h>

namespace trainyard::cost {
namespace {

using std::chrono::hours;
using std::chrono::microseconds;
using std::chrono::minutes;

const Timestamp kT0 = FromUnixMicros(1'700'000'000'000'000);

TEST(AccrualTest, AnAdmissionCostsItsHourlyPriceTimesTheHoursItHeld) {
  EXPECT_EQ(AccruedMicros(88'480'000, hours(2)), 176'960'000) << "$88.48 an hour for 2 hours";
  EXPECT_EQ(AccruedMicros(88'480'000, minutes(90)), 132'720'000);
  EXPECT_EQ(AccruedMicros(88'480'000, Duration{}), 0);
  EXPECT_EQ(AccruedMicros(0, hours(5)), 0) << "a job on a persistent resource: the resource bills";
  // A year of a $100-an-hour placement is exact to the micro-dollar.
  EXPECT_EQ(AccruedMicros(100'000'000, hours(24 * 365)), 876'000'000'000);
}

// Stored costs are whole micro-dollars: to the nearest, halves away from zero, as PostgreSQL's
// numeric → bigint cast rounds the same figures.
TEST(AccrualTest, RoundsToTheNearestMicroDollarHalvesAwayFromZero) {
  EXPECT_EQ(AccruedMicros(1, minutes(30)), 1) << "0.5 µ$ rounds up";
  EXPECT_EQ(AccruedMicros(3, minutes(30)), 2) << "1.5 µ$ rounds up";
  EXPECT_EQ(AccruedMicros(1, microseconds(1'799'999'999)), 0) << "just under 0.5 µ$";
  EXPECT_EQ(AccruedMicros(1, microseconds(1'800'000'001)), 1);
  EXPECT_EQ(AccruedMicros(1, -minutes(30)), -1) << "a clock that stepped back: as the cast does";
}

TEST(AccrualTest, ARunningAdmissionShowsItsCostSoFarUnrounded) {
  EXPECT_DOUBLE_EQ(RunningUsd(10.0, kT0, kT0 + minutes(90)), 15.0);
  EXPECT_DOUBLE_EQ(RunningUsd(1e-6, kT0, kT0 + minutes(30)), 0.5e-6) << "not rounded: a read";
  EXPECT_EQ(RunningUsd(10.0, kT0, kT0), 0);
  EXPECT_EQ(RunningUsd(10.0, kT0, kT0 - minutes(1)), 0) << "nothing before the admission";
}

TEST(AccrualTest, OpenAdmissionsRunUpEachRoundedAndNoneBeforeItBegins) {
  const std::vector<OpenAdmission> open = {
      {1, kT0}, {1, kT0}, {10'000'000, kT0 - hours(1)}, {10'000'000, kT0 + hours(1)}};
  // 0.5 µ$ twice: each rounds (1 + 1), not their sum; the last has not begun.
  EXPECT_EQ(RunningMicros(open, kT0 + minutes(30)), 1 + 1 + 15'000'000);
  EXPECT_EQ(RunningMicros({}, kT0), 0);
  EXPECT_EQ(RunningMicros({{10'000'000, kT0}}, kT0), 0) << "admitted just now";
}

TEST(AccrualTest, MicroDollarsShowAsDollars) {
  EXPECT_DOUBLE_EQ(Usd(1'234'567), 1.234567);
  EXPECT_EQ(Usd(0), 0);
}

}  // namespace
}  // namespace trainyard::cost
