#pragma once
// All time goes through a Clock, so tests drive time by hand and the simulator can run faster.
#include <atomic>
#include <chrono>

#include "services/time.h"

namespace trainyard {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Timestamp Now() const = 0;
  // How much wall time passes while this clock advances by `span`: loops that wait for a virtual
  // moment sleep this long.
  virtual std::chrono::microseconds WallFor(Duration span) const {
    return std::chrono::duration_cast<std::chrono::microseconds>(span);
  }
  // This clock's time at the wall-clock instant `wall`. For the one kind of timestamp a client
  // computes from its own wall clock: gcloud stream-logs' upper bound "now - 5 s", which must keep
  // meaning "5 wall seconds ago" when virtual time runs faster than the wall.
  virtual Timestamp AtWallTime(Timestamp wall) const { return wall; }
};

class SystemClock final : public Clock {
 public:
  Timestamp Now() const override {
    return std::chrono::time_point_cast<std::chrono::microseconds>(
        std::chrono::system_clock::now());
  }
};

// Test clock: time moves only when the test says so.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(Timestamp start) : now_us_(ToUnixMicros(start)) {}
  Timestamp Now() const override { return FromUnixMicros(now_us_.load()); }
  void Set(Timestamp t) { now_us_.store(ToUnixMicros(t)); }
  void Advance(std::chrono::microseconds d) { now_us_.fetch_add(d.count()); }

 private:
  std::atomic<int64_t> now_us_;
};

// Virtual time of the simulator: virtual_epoch + (wall_now - wall_epoch) * speed. The epochs are
// stored in the database so every process (and a restarted one) agrees on the same virtual now.
class ScaledClock final : public Clock {
 public:
  ScaledClock(Timestamp wall_epoch, Timestamp virtual_epoch, double speed)
      : wall_epoch_(wall_epoch), virtual_epoch_(virtual_epoch), speed_(speed) {}
  Timestamp Now() const override {
    auto wall = SystemClock().Now() - wall_epoch_;
    auto scaled = std::chrono::microseconds(static_cast<int64_t>(wall.count() * speed_));
    return virtual_epoch_ + scaled;
  }
  double speed() const { return speed_; }
  std::chrono::microseconds WallFor(Duration span) const override {
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(span).count();
    return std::chrono::microseconds(static_cast<int64_t>(static_cast<double>(us) / speed_));
  }
  Timestamp AtWallTime(Timestamp wall) const override {
    auto since = wall - wall_epoch_;
    return virtual_epoch_ + std::chrono::microseconds(static_cast<int64_t>(since.count() * speed_));
  }

 private:
  Timestamp wall_epoch_;
  Timestamp virtual_epoch_;
  double speed_;
};

}  // namespace trainyard
