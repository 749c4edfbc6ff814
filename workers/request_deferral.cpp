#include "workers/request_deferral.h"

namespace trainyard {

std::chrono::steady_clock::duration DeferToRequests(const RequestDeferral& deferral,
                                                    std::chrono::steady_clock::time_point last_pass,
                                                    std::mutex& mu, std::condition_variable& wake,
                                                    const std::atomic<bool>& stop) {
  // A look every 5 ms: the gauge has no condition to wait on (the server only counts), and a
  // deferred pass starting up to 5 ms after the writes quiet down costs nothing a user sees.
  constexpr std::chrono::milliseconds kLook{5};
  if (deferral.requests == nullptr || !deferral.requests->busy()) return {};
  const auto began = std::chrono::steady_clock::now();
  const auto until = last_pass + deferral.max_defer;
  std::unique_lock lock(mu);
  while (!stop.load() && deferral.requests->busy()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= until) break;
    wake.wait_for(lock, std::min<std::chrono::steady_clock::duration>(kLook, until - now),
                  [&stop] { return stop.load(); });
  }
  return std::chrono::steady_clock::now() - began;
}

}  // namespace trainyard
