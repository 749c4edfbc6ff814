#include "services/scheduler/walk_order.h"

#include <gtest/gtest.h>

#include <vector>

namespace trainyard {
namespace {

struct Hot {
  int told = 0;
};
using Walk = WalkOrder<int, int, Hot>;

std::vector<int> Live(const Walk& walk) {
  std::vector<int> out;
  for (size_t i = walk.LiveFrom(0); i < walk.size(); i = walk.LiveFrom(i + 1)) {
    out.push_back(*walk[i].item);
  }
  return out;
}

TEST(WalkOrderTest, KeepsKeyOrderAndLeavesGapsThatAWalkSkips) {
  std::vector<int> items = {10, 20, 30, 40, 50};
  Walk walk;
  walk.Insert(3, &items[2], {});
  walk.Insert(5, &items[4], {});
  walk.Insert(1, &items[0], {});
  walk.Insert(4, &items[3], {});
  walk.Insert(2, &items[1], {});
  EXPECT_EQ(Live(walk), (std::vector<int>{10, 20, 30, 40, 50}));
  // A walk at slot 1 removes the job there: the slots behind stay where they were.
  ASSERT_TRUE(walk.Erase(2, &items[1]));
  EXPECT_EQ(walk.size(), 5u);
  EXPECT_EQ(walk.LiveFrom(1), 2u);
  EXPECT_FALSE(walk.Erase(2, &items[1]));
  EXPECT_FALSE(walk.Erase(3, &items[0]));  // not at that key
  EXPECT_EQ(walk.live(), 4u);
  EXPECT_EQ(Live(walk), (std::vector<int>{10, 30, 40, 50}));
  // Packed only once gaps are over a quarter of the slots.
  walk.PackIfSparse();
  EXPECT_EQ(walk.size(), 5u);
  ASSERT_TRUE(walk.Erase(5, &items[4]));
  walk.PackIfSparse();
  EXPECT_EQ(walk.size(), 3u);
  EXPECT_EQ(Live(walk), (std::vector<int>{10, 30, 40}));
}

TEST(WalkOrderTest, FindsAnItemsSlotAmongEqualKeys) {
  std::vector<int> items = {1, 2};
  Walk walk;
  walk.Insert(7, &items[0], {.told = 3});
  ASSERT_TRUE(walk.Erase(7, &items[0]));
  walk.Insert(7, &items[1], {.told = 4});  // the same key again: a job upserted
  ASSERT_NE(walk.Find(7, &items[1]), nullptr);
  EXPECT_EQ(walk.Find(7, &items[1])->hot.told, 4);
  EXPECT_EQ(walk.Find(7, &items[0]), nullptr);
  EXPECT_EQ(Live(walk), (std::vector<int>{2}));
}

}  // namespace
}  // namespace trainyard
