#pragma once
// The API's writes in flight, which the background loops give way to: while at least `busy_at`
// wait for their commit, a scheduler or executor pass waits (up to its loop's bound), so the CPU
// and the database serve the requests first and the passes catch up in larger batches. Slurm
// defers scheduling the same way while its RPC threads are busy (SchedulerParameters=
// max_rpc_cnt). Lock-free: the server counts on every write, the loops only read.
#include <atomic>

namespace trainyard {

class RequestGauge {
 public:
  explicit RequestGauge(int busy_at) : busy_at_(busy_at) {}

  void Enter() { in_flight_.fetch_add(1, std::memory_order_relaxed); }
  void Leave() { in_flight_.fetch_sub(1, std::memory_order_relaxed); }
  int in_flight() const { return in_flight_.load(std::memory_order_relaxed); }
  bool busy() const { return busy_at_ > 0 && in_flight() >= busy_at_; }

 private:
  const int busy_at_;
  std::atomic<int> in_flight_{0};
};

}  // namespace trainyard
