// How the scheduler's commit chooses nodes within a pool: whole units only, warm and cached first.
#include "services/scheduler/free_units.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

FreeNode Node(int64_t ordinal, bool warm, std::vector<std::string> cache = {}) {
  return FreeNode{ordinal, warm, std::move(cache)};
}

TEST(FreeUnitsTest, PrefersWarmNodesThatCacheTheImageThenWarmThenCold) {
  FreeUnits free(1, {Node(0, false), Node(1, true), Node(2, true, {"img:a"}), Node(3, false),
                     Node(4, true, {"img:b", "img:a"})});
  EXPECT_EQ(free.Take(2, "img:a").ordinals, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(free.Take(2, "img:a").ordinals, (std::vector<int64_t>{1, 0}));  // warm, then cold
  EXPECT_EQ(free.Take(1, "img:a").ordinals, (std::vector<int64_t>{3}));
  EXPECT_EQ(free.units(), 0u);
}

TEST(FreeUnitsTest, TakesNothingWhenTooFewUnitsAreFree) {
  FreeUnits free(1, {Node(5, true), Node(9, true)});
  EXPECT_TRUE(free.Take(3, "img").ordinals.empty());
  EXPECT_EQ(free.units(), 2u);  // a refused take leaves everything in place
  EXPECT_EQ(free.Take(2, "img").ordinals, (std::vector<int64_t>{5, 9}));
}

TEST(FreeUnitsTest, SlicesCountOnlyWhenEveryHostIsFree) {
  // Slices of 4 hosts: unit 0 = ordinals 0-3 (all free), unit 1 = 4-7 (ordinal 6 busy).
  FreeUnits free(4, {Node(0, true), Node(1, true), Node(2, true), Node(3, true), Node(4, true),
                     Node(5, true), Node(7, true)});
  EXPECT_EQ(free.units(), 1u);
  EXPECT_EQ(free.Take(1, "img").ordinals, (std::vector<int64_t>{0, 1, 2, 3}));
}

TEST(FreeUnitsTest, ASliceIsCachedOnlyIfEveryHostCachesTheImage) {
  FreeUnits free(
      2, {Node(0, true, {"x"}), Node(1, true), Node(2, true, {"x"}), Node(3, true, {"x", "y"})});
  EXPECT_EQ(free.Take(1, "x").ordinals, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(free.Take(1, "x").ordinals, (std::vector<int64_t>{0, 1}));
}

TEST(FreeUnitsTest, SaysWhetherTheTakenUnitsNeedABootOrAPull) {
  FreeUnits free(1, {Node(0, true, {"x"}), Node(1, true), Node(2, false)});
  auto cached = free.Take(1, "x");
  EXPECT_FALSE(cached.cold);
  EXPECT_FALSE(cached.uncached);
  auto warm = free.Take(1, "x");
  EXPECT_FALSE(warm.cold);
  EXPECT_TRUE(warm.uncached);
  auto cold = free.Take(1, "x");
  EXPECT_TRUE(cold.cold);
  EXPECT_TRUE(cold.uncached);
}

TEST(FreeUnitsTest, ASliceWithAColdHostIsCold) {
  FreeUnits free(2, {Node(0, true, {"x"}), Node(1, false), Node(2, true), Node(3, true)});
  EXPECT_EQ(free.Take(1, "x").ordinals, (std::vector<int64_t>{2, 3}));  // warm beats partly cold
}

}  // namespace
// Blocks of 4 nodes: block 0 has 2 free, block 1 has 3, block 2 all 4. A gang goes to the one
// block with the fewest free nodes that holds it, and spreads only when no block does.
TEST(FreeUnitsTest, AGangTakesTheTightestBlockThatHoldsItAndSpreadsOnlyWhenNoneDoes) {
  std::vector<FreeNode> nodes;
  for (int64_t o : {2, 3, 5, 6, 7, 8, 9, 10, 11}) nodes.push_back({o, false, {}});
  FreeUnits free(1, nodes, /*block_nodes=*/4);
  FreeUnits::Taken three = free.Take(3, "img");
  EXPECT_EQ(three.ordinals, (std::vector<int64_t>{5, 6, 7})) << "block 1, leaving block 2 whole";
  EXPECT_EQ(three.blocks, 1);
  FreeUnits::Taken four = free.Take(4, "img");
  EXPECT_EQ(four.ordinals, (std::vector<int64_t>{8, 9, 10, 11}));
  EXPECT_EQ(four.blocks, 1);
  FreeUnits::Taken two = free.Take(2, "img");
  EXPECT_EQ(two.ordinals, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(FreeUnits(1, nodes).Take(3, "img").blocks, 0) << "a pool without blocks counts none";
  FreeUnits spread(1, nodes, 4);
  spread.Take(4, "img");  // block 2
  FreeUnits::Taken five = spread.Take(5, "img");
  EXPECT_EQ(five.ordinals.size(), 5u);
  EXPECT_EQ(five.blocks, 2) << "no block holds 5: blocks 0 and 1";
}

// Blocks of 4: blocks 0, 1 and 2 have 1 free node each, block 3 has 3. A gang of 4 no block holds
// spreads over the fewest blocks, the freest first: 3 and 0, not 0, 1 and 2 lowest first.
TEST(FreeUnitsTest, AGangNoBlockHoldsSpreadsOverTheFewestBlocks) {
  std::vector<FreeNode> nodes;
  for (int64_t o : {0, 4, 8, 12, 13, 14}) nodes.push_back({o, false, {}});
  FreeUnits free(1, nodes, /*block_nodes=*/4);
  FreeUnits::Taken four = free.Take(4, "img");
  EXPECT_EQ(four.ordinals, (std::vector<int64_t>{0, 12, 13, 14}));
  EXPECT_EQ(four.blocks, 2);
}

}  // namespace trainyard
