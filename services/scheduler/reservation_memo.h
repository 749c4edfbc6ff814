#pragma once
// Backfill::Reserve's answer per shape within one state of the capacity. A reservation reads the
// job's shape alone (its pools, region, project, priority and flavors), the snapshot and the
// running jobs' expected ends, never the cycle's holds (Backfill::Reserve: "holds of other jobs do
// not count"), so the waiting jobs of one shape that each book a hold in a cycle, which change no
// capacity, get the same answer: one search, not one per job.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "services/scheduler/backfill.h"

namespace trainyard {

class ReservationMemo {
 public:
  // The answer remembered for `shape` on `flavors` in `cycle` at `capacity_changes` (Scheduler's
  // counter of what moves a fit); null when there is none.
  const std::optional<Reservation>* Find(int64_t cycle, int64_t capacity_changes, int shape,
                                         std::span<const ConsumptionModel> flavors) const {
    if (shape < 0 || static_cast<size_t>(shape) >= by_shape_.size()) return nullptr;
    const Entry& e = by_shape_[static_cast<size_t>(shape)];
    if (e.cycle != cycle || e.capacity_changes != capacity_changes ||
        !std::equal(e.flavors.begin(), e.flavors.end(), flavors.begin(), flavors.end())) {
      return nullptr;
    }
    return &e.reserved;
  }
  // `room` (at least the shape's slot) is how far to grow at once.
  void Remember(int64_t cycle, int64_t capacity_changes, int shape,
                std::span<const ConsumptionModel> flavors,
                const std::optional<Reservation>& reserved, size_t room) {
    const auto i = static_cast<size_t>(shape);
    if (i >= by_shape_.size()) by_shape_.resize(std::max(i + 1, room));
    Entry& e = by_shape_[i];
    e.cycle = cycle;
    e.capacity_changes = capacity_changes;
    e.flavors.assign(flavors.begin(), flavors.end());
    e.reserved = reserved;
  }
  void Clear() { by_shape_.clear(); }

 private:
  struct Entry {
    int64_t cycle = -1;
    int64_t capacity_changes = 0;
    std::vector<ConsumptionModel> flavors;  // as quota narrowed them
    std::optional<Reservation> reserved;
  };
  std::vector<Entry> by_shape_;
};

}  // namespace trainyard
