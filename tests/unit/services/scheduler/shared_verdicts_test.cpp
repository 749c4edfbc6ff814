#include "services/scheduler/shared_verdicts.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

Verdict Said(const char* text, ReasonCode code = ReasonCode::kNoCapacity) {
  Verdict v;
  v.code = code;
  v.message = text;
  return v;
}

TEST(SharedVerdictsTest, AShapeVerdictAnswersOnlyItsKeyAndOnlyInItsCycle) {
  SharedVerdicts shared;
  EXPECT_EQ(shared.OfShape(1, 0), nullptr);
  shared.RememberShape(1, 3, Said("no capacity"), 8);
  ASSERT_NE(shared.OfShape(1, 3), nullptr);
  EXPECT_EQ(shared.OfShape(1, 3)->message, "no capacity");
  EXPECT_EQ(shared.OfShape(1, 2), nullptr);   // the same shape, not allowed to hold
  EXPECT_EQ(shared.OfShape(2, 3), nullptr);   // the next cycle decides afresh
  EXPECT_EQ(shared.OfShape(1, 99), nullptr);  // past what was ever remembered
  shared.RememberShape(2, 3, Said("quota", ReasonCode::kQuotaExceeded), 8);
  EXPECT_EQ(shared.OfShape(2, 3)->code, ReasonCode::kQuotaExceeded);
  EXPECT_EQ(shared.OfShape(1, 3), nullptr);
}

TEST(SharedVerdictsTest, AnUnchangedFitAnswersOnlyTheSameQueueAndState) {
  SharedVerdicts shared;
  const FitState state{7, 2, 0, 10};
  shared.RememberUnchangedFit(4, 1, 0, state, Said("held for job 9"), 4);
  ASSERT_NE(shared.UnchangedFit(4, 1, 0, state), nullptr);
  EXPECT_EQ(shared.UnchangedFit(4, 1, 0, state)->message, "held for job 9");
  EXPECT_EQ(shared.UnchangedFit(4, 1, 1, state), nullptr);  // another queue
  EXPECT_EQ(shared.UnchangedFit(5, 1, 0, state), nullptr);  // another cycle
  EXPECT_EQ(shared.UnchangedFit(4, 0, 0, state), nullptr);  // another shape
  // Any part of the state moved: capacity, holds booked, victims claimed or left.
  for (FitState moved : {FitState{8, 2, 0, 10}, FitState{7, 3, 0, 10}, FitState{7, 2, 1, 10},
                         FitState{7, 2, 0, 9}}) {
    EXPECT_EQ(shared.UnchangedFit(4, 1, 0, moved), nullptr);
  }
}

TEST(SharedVerdictsTest, TheTwoMemoriesAreKeptApart) {
  SharedVerdicts shared;
  const FitState state{};
  // Shape id 1's unchanged fit and shape key 1 (shape 0, may hold) are different jobs' answers.
  shared.RememberUnchangedFit(1, 1, 0, state, Said("fitted"), 4);
  EXPECT_EQ(shared.OfShape(1, 1), nullptr);
  EXPECT_EQ(shared.OfShape(1, 2), nullptr);
  shared.RememberShape(1, 0, Said("shape"), 4);
  EXPECT_EQ(shared.UnchangedFit(1, 0, 0, state), nullptr);
  EXPECT_EQ(shared.UnchangedFit(1, 1, 0, state)->message, "fitted");
  shared.Clear();
  EXPECT_EQ(shared.OfShape(1, 0), nullptr);
  EXPECT_EQ(shared.UnchangedFit(1, 1, 0, state), nullptr);
}

TEST(SharedVerdictsTest, AShapeKeepsItsSerialOnlyWhileItsVerdictIsTheSame) {
  SharedVerdicts shared;
  Verdict v = Said("no capacity");
  shared.RememberShape(1, 0, v, 4);
  uint64_t serial = shared.ShapeSerial(0);
  EXPECT_NE(serial, 0u);
  v.position = 40;  // not part of what the shape shares
  shared.RememberShape(2, 0, v, 4);
  EXPECT_EQ(shared.ShapeSerial(0), serial);
  // Another code, another key or equal words in another copy: not known to be the same.
  int64_t cycle = 3;
  auto changed = [&](Verdict next) {
    shared.RememberShape(cycle++, 0, next, 4);
    const uint64_t now = shared.ShapeSerial(0);
    const bool is_new = now != serial;
    serial = now;
    return is_new;
  };
  v.code = ReasonCode::kNoZoneFitsGang;
  EXPECT_TRUE(changed(v));
  v.key.free = 3;
  EXPECT_TRUE(changed(v));
  v.message = SharedText(std::string("no capacity"));
  EXPECT_TRUE(changed(v));
  EXPECT_FALSE(changed(v));
  // Another key's serial is its own: a serial number is never given twice.
  shared.RememberShape(cycle, 1, v, 4);
  EXPECT_NE(shared.ShapeSerial(1), shared.ShapeSerial(0));
}

}  // namespace
}  // namespace trainyard
