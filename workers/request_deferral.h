#pragma once
// How a background loop gives the API's requests priority: before each pass, while the writes in
// flight are busy (services/request_gauge.h), it waits until they are not, or until `max_defer`
// has passed since its last pass began, so under a storm of creates it still runs at least that
// often, on the larger batch that built up meanwhile.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "services/request_gauge.h"

namespace trainyard {

struct RequestDeferral {
  const RequestGauge* requests = nullptr;  // none: passes never wait
  // Chosen: a create storm delays admission and launches by at most a second of wall time.
  std::chrono::milliseconds max_defer{1000};
};

// Waits as above under `mu` on `wake` (a Stop that notifies `wake` after setting `stop` ends it at
// once), looking at the gauge every few milliseconds. Returns how long it waited (the loops'
// metrics count it: a storm's delay to admissions and launches is visible, not silent).
std::chrono::steady_clock::duration DeferToRequests(const RequestDeferral& deferral,
                                                    std::chrono::steady_clock::time_point last_pass,
                                                    std::mutex& mu, std::condition_variable& wake,
                                                    const std::atomic<bool>& stop);

}  // namespace trainyard
