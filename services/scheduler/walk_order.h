#pragma once
// A queue's active order again, as the dense array a cycle walks (QueueManager::Queue::walk), each
// slot with a copy of what most visits read (`Hot`): in a deep queue a visit through the std::map
// costs a miss on the tree's node and another on the entry; through the array, a visit that only
// finds the job holding what it held reads neither.
// Removal leaves a gap (the item null) so that a walk's indices stay put while it admits and parks;
// inserting and packing move them, and happen only between walks.
#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace trainyard {

template <typename Key, typename T, typename Hot>
class WalkOrder {
 public:
  struct Slot {
    Key key;
    T* item = nullptr;  // null: gone since the array was last packed
    Hot hot;
  };

  // `item` at `key`'s place (keys are unique among the live slots).
  void Insert(const Key& key, T* item, const Hot& hot) {
    if (gone_ * 4 > slots_.size()) Pack();
    if (slots_.empty() || slots_.back().key < key) {
      slots_.push_back({key, item, hot});  // most arrivals queue last
      return;
    }
    slots_.insert(LowerBound(key), Slot{key, item, hot});
  }
  // `item`'s slot (it is at `key`); null when it is not here.
  Slot* Find(const Key& key, const T* item) {
    for (auto it = LowerBound(key); it != slots_.end() && !(key < it->key); ++it) {
      if (it->item == item) return &*it;
    }
    return nullptr;
  }
  // Leaves a gap where `item` was; false when it is not here.
  bool Erase(const Key& key, const T* item) {
    Slot* slot = Find(key, item);
    if (slot == nullptr) return false;
    slot->item = nullptr;
    ++gone_;
    return true;
  }
  // Drops the gaps, when they are a quarter of the slots or more.
  void PackIfSparse() {
    if (gone_ * 4 > slots_.size()) Pack();
  }
  void Clear() {
    slots_.clear();
    gone_ = 0;
  }

  // The first live slot at or after `i` (size() when none).
  size_t LiveFrom(size_t i) const {
    while (i < slots_.size() && slots_[i].item == nullptr) ++i;
    return i;
  }
  Slot& operator[](size_t i) { return slots_[i]; }
  const Slot& operator[](size_t i) const { return slots_[i]; }
  size_t size() const { return slots_.size(); }
  size_t live() const { return slots_.size() - gone_; }

 private:
  typename std::vector<Slot>::iterator LowerBound(const Key& key) {
    return std::lower_bound(slots_.begin(), slots_.end(), key,
                            [](const Slot& s, const Key& k) { return s.key < k; });
  }
  void Pack() {
    std::erase_if(slots_, [](const Slot& s) { return s.item == nullptr; });
    gone_ = 0;
  }

  std::vector<Slot> slots_;  // by key, gaps included
  size_t gone_ = 0;
};

}  // namespace trainyard
