#include "workers/runtime_backoff.h"

#include <algorithm>

namespace trainyard {

bool RuntimeBackoff::Waiting(int64_t job_id, Clock::time_point now) const {
  auto it = waits_.find(job_id);
  return it != waits_.end() && now < it->second.until;
}

std::chrono::milliseconds RuntimeBackoff::Failed(int64_t job_id, Clock::time_point now) {
  Wait& w = waits_[job_id];
  w.last = w.last.count() == 0 ? first_ : std::min(w.last * 2, max_);
  w.until = now + w.last;
  return w.last;
}

}  // namespace trainyard
