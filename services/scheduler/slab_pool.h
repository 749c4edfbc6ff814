#pragma once
// Fixed-size slots carved from slabs, for what the scheduler's cycle walks: the nodes of the
// queues' rank orders, the pending jobs' entries, the admitted jobs and backfill's releases.
// Every step of a walk is a dependent load.
// From malloc, each node and entry lands among its job's other allocations, so the live ones of
// the active orders spread over all the memory the pending jobs take: with 90% of them parked,
// ten times the pages the TLB covers. From pools of their own (one for the active, one for the
// parked), the active ones share few pages, and a compaction that moves them in rank order
// keeps it so after many park (Scheduler::CompactActive).
#include <algorithm>
#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

namespace trainyard {

template <size_t kObjectSize, size_t kAlign = 64>
class SlabPool {
 public:
  // Whole cache lines: an object never shares a line with another.
  static constexpr size_t kSlotSize = (kObjectSize + kAlign - 1) / kAlign * kAlign;

  SlabPool() = default;
  SlabPool(const SlabPool&) = delete;
  SlabPool& operator=(const SlabPool&) = delete;

  void* Allocate() {
    ++live_;
    if (free_ != nullptr) {
      FreeSlot* slot = free_;
      free_ = slot->next;
      slot->~FreeSlot();
      return slot;
    }
    if (next_in_slab_ == kSlotsPerSlab) {
      slabs_.push_back(std::make_unique_for_overwrite<Slot[]>(kSlotsPerSlab));
      next_in_slab_ = 0;
    }
    return &slabs_.back()[next_in_slab_++];
  }
  void Deallocate(void* slot) noexcept {
    --live_;
    free_ = new (slot) FreeSlot{free_};
  }

  size_t live() const { return live_; }
  size_t slots() const { return slabs_.size() * kSlotsPerSlab; }

 private:
  struct alignas(kAlign) Slot {
    std::byte bytes[kSlotSize];
  };
  struct FreeSlot {
    FreeSlot* next;
  };
  static constexpr size_t kSlotsPerSlab = std::max<size_t>(1, (size_t{64} << 10) / kSlotSize);
  std::vector<std::unique_ptr<Slot[]>> slabs_;
  size_t next_in_slab_ = kSlotsPerSlab;  // of the newest slab: handed out in address order
  FreeSlot* free_ = nullptr;             // the last freed first
  size_t live_ = 0;
};

// Slots of a cache line: a map node of a 24-byte key and a pointer.
using NodePool = SlabPool<64>;

// A container's allocator onto a pool (a NodePool unless said): single nodes that fit a slot come
// from the pool, anything else from the heap. Containers that share a pool keep it; the pool
// outlives them.
template <typename T, typename Pool = NodePool>
class PoolAllocator {
 public:
  using value_type = T;
  using propagate_on_container_copy_assignment = std::true_type;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;

  explicit PoolAllocator(Pool* pool) noexcept : pool_(pool) {}
  template <typename U>
  PoolAllocator(const PoolAllocator<U, Pool>& other) noexcept : pool_(other.pool()) {}

  T* allocate(size_t n) {
    if (Pooled(n)) return static_cast<T*>(pool_->Allocate());
    return std::allocator<T>{}.allocate(n);
  }
  void deallocate(T* p, size_t n) noexcept {
    if (Pooled(n)) {
      pool_->Deallocate(p);
    } else {
      std::allocator<T>{}.deallocate(p, n);
    }
  }

  Pool* pool() const { return pool_; }
  template <typename U>
  bool operator==(const PoolAllocator<U, Pool>& other) const {
    return pool_ == other.pool();
  }

 private:
  static constexpr bool kFits =
      sizeof(T) <= Pool::kSlotSize && alignof(T) <= alignof(std::max_align_t);
  static bool Pooled(size_t n) { return kFits && n == 1; }
  Pool* pool_;
};

}  // namespace trainyard
