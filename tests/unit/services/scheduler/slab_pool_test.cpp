#include "services/scheduler/slab_pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <tuple>

namespace trainyard {
namespace {

TEST(SlabPoolTest, SlotsAreWholeCacheLinesAndFreedOnesComeBackFirst) {
  SlabPool<100> pool;
  EXPECT_EQ(SlabPool<100>::kSlotSize, 128u);
  std::set<void*> slots;
  for (int i = 0; i < 1000; ++i) {
    void* p = pool.Allocate();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
    EXPECT_TRUE(slots.insert(p).second) << "a slot handed out twice";
  }
  EXPECT_EQ(pool.live(), 1000u);
  EXPECT_GE(pool.slots(), 1000u);
  void* freed = *slots.begin();
  pool.Deallocate(freed);
  EXPECT_EQ(pool.live(), 999u);
  EXPECT_EQ(pool.Allocate(), freed);
}

TEST(SlabPoolTest, AMapsNodesComeFromItsPoolAndGoBackToIt) {
  NodePool pool;
  using Key = std::tuple<int, int64_t, int64_t>;
  using Map = std::map<Key, int*, std::less<Key>, PoolAllocator<std::pair<const Key, int*>>>;
  {
    Map map{Map::allocator_type(&pool)};
    for (int64_t i = 0; i < 3000; ++i) map.emplace(Key{0, i, i}, nullptr);
    EXPECT_EQ(pool.live(), 3000u) << "every node in a slot of the pool";
    map.erase(map.begin());
    EXPECT_EQ(pool.live(), 2999u);
    Map moved = std::move(map);
    EXPECT_EQ(moved.get_allocator().pool(), &pool);
  }
  EXPECT_EQ(pool.live(), 0u);
}

TEST(SlabPoolTest, AllocatorsCompareEqualOnlyOnTheSamePool) {
  NodePool a, b;
  EXPECT_TRUE(PoolAllocator<int>(&a) == PoolAllocator<long>(&a));
  EXPECT_FALSE(PoolAllocator<int>(&a) == PoolAllocator<int>(&b));
}

TEST(SlabPoolTest, ArraysAndLargeObjectsComeFromTheHeap) {
  NodePool pool;
  PoolAllocator<int64_t> alloc(&pool);
  int64_t* many = alloc.allocate(16);
  EXPECT_EQ(pool.live(), 0u);
  alloc.deallocate(many, 16);
  struct Big {
    char bytes[200];
  };
  PoolAllocator<Big> big(alloc);
  Big* one = big.allocate(1);
  EXPECT_EQ(pool.live(), 0u);
  big.deallocate(one, 1);
}

}  // namespace
}  // namespace trainyard
