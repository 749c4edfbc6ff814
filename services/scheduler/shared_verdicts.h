#pragma once
// The verdicts a cycle shares between waiting jobs of one shape, so that most of a deep queue is
// given a verdict without a fit. Two memories, kept apart because they answer different jobs:
// a shape's verdict this cycle (for jobs that may not hold capacity: nothing they could do
// differs within a cycle) and a shape's last unchanged fit (for jobs that may hold capacity: the
// same only while the state it was fitted on is the same).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "services/scheduler/verdict.h"

namespace trainyard {

// What a fit, a preemption plan and a hold read that a cycle moves: the capacity changes so far
// (Scheduler's counter), the holds booked, the victims claimed and the victims still allowed.
struct FitState {
  int64_t capacity_changes = 0;
  size_t holds = 0;
  size_t claimed = 0;
  int victims_left = 0;

  bool operator==(const FitState&) const = default;
};

class SharedVerdicts {
 public:
  // A shape's key among the verdicts: its jobs that may reserve capacity apart from the others.
  static int64_t ShapeKey(int shape, bool may_reserve) {
    return int64_t{shape} * 2 + (may_reserve ? 1 : 0);
  }
  // The verdict of `shape_key` (ShapeKey) remembered in `cycle`; null when none was this cycle.
  const Verdict* OfShape(int64_t cycle, int64_t shape_key) const {
    if (shape_key < 0 || shape_key >= static_cast<int64_t>(shapes_.size())) return nullptr;
    const ShapeEntry& e = shapes_[static_cast<size_t>(shape_key)];
    return e.cycle == cycle ? &e.verdict : nullptr;
  }
  // The serial number of OfShape's verdict (non-null): equal serials of one key mean equal
  // verdicts (code, shared text, key), so a job can tell it holds this one with one compare.
  uint64_t ShapeSerial(int64_t shape_key) const {
    return shapes_[static_cast<size_t>(shape_key)].serial;
  }
  // The verdict `serial` numbers while it is still `shape_key`'s (whatever the cycle); null
  // otherwise: an older serial names a verdict no longer kept, which no visit matches again.
  const Verdict* OfSerial(int64_t shape_key, uint64_t serial) const {
    if (serial == 0 || shape_key < 0 || shape_key >= static_cast<int64_t>(shapes_.size())) {
      return nullptr;
    }
    const ShapeEntry& e = shapes_[static_cast<size_t>(shape_key)];
    return e.serial == serial ? &e.verdict : nullptr;
  }
  // `room` (at least the key's slot) is how far to grow at once: shape ids grow slowly. A verdict
  // equal to the one the key had keeps its serial number.
  void RememberShape(int64_t cycle, int64_t shape_key, const Verdict& verdict, size_t room) {
    ShapeEntry& e = Slot(shapes_, static_cast<size_t>(shape_key), room);
    if (e.serial == 0 || !e.verdict.SharesWith(verdict)) e.serial = ++serials_;
    e.cycle = cycle;
    e.verdict = verdict;
  }

  // The verdict of the last job of `shape` fitted in `cycle`, from `queue`, on `state`, that
  // changed nothing; null otherwise.
  const Verdict* UnchangedFit(int64_t cycle, int shape, int queue, const FitState& state) const {
    if (shape < 0 || shape >= static_cast<int>(fits_.size())) return nullptr;
    const FitEntry& e = fits_[static_cast<size_t>(shape)];
    if (e.cycle != cycle || e.queue != queue || !(e.state == state)) return nullptr;
    return &e.verdict;
  }
  void RememberUnchangedFit(int64_t cycle, int shape, int queue, const FitState& state,
                            const Verdict& verdict, size_t room) {
    FitEntry& e = Slot(fits_, static_cast<size_t>(shape), room);
    e.cycle = cycle;
    e.queue = queue;
    e.state = state;
    e.verdict = verdict;
  }

  void Clear() {
    shapes_.clear();
    fits_.clear();
  }

 private:
  struct ShapeEntry {
    int64_t cycle = -1;
    uint64_t serial = 0;  // none yet
    Verdict verdict;
  };
  struct FitEntry {
    int64_t cycle = -1;
    int queue = -1;
    FitState state;
    Verdict verdict;
  };
  template <typename Entry>
  static Entry& Slot(std::vector<Entry>& v, size_t i, size_t room) {
    if (i >= v.size()) v.resize(std::max(i + 1, room));
    return v[i];
  }

  std::vector<ShapeEntry> shapes_;  // by shape key
  std::vector<FitEntry> fits_;      // by shape id
  uint64_t serials_ = 0;            // the last given: serial numbers are never reused
};

}  // namespace trainyard
