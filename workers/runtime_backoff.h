#pragma once
// Jobs whose runtime did not answer (slurmrestd down, a token expired, a host that cannot fork):
// each waits before it is stepped again, doubling from `first` up to `max`, so an outage costs the
// runtime a request per job every few seconds, not one per job per executor pass. Wall time:
// an outage lasts as long in a simulation as anywhere. One executor thread uses it.
#include <chrono>
#include <cstdint>
#include <unordered_map>

namespace trainyard {

class RuntimeBackoff {
 public:
  using Clock = std::chrono::steady_clock;
  RuntimeBackoff(std::chrono::milliseconds first, std::chrono::milliseconds max)
      : first_(first), max_(max) {}

  // Whether the job is still waiting out its last failure at `now`.
  bool Waiting(int64_t job_id, Clock::time_point now) const;
  // Another failure: how long the job now waits (first, 2×first, … max).
  std::chrono::milliseconds Failed(int64_t job_id, Clock::time_point now);
  // The runtime answered for the job: no more waiting.
  void Answered(int64_t job_id) {
    if (!waits_.empty()) waits_.erase(job_id);
  }
  size_t waiting() const { return waits_.size(); }

 private:
  struct Wait {
    std::chrono::milliseconds last{};
    Clock::time_point until{};
  };
  std::chrono::milliseconds first_;
  std::chrono::milliseconds max_;
  std::unordered_map<int64_t, Wait> waits_;
};

}  // namespace trainyard
