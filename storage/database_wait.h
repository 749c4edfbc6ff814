#pragma once
// An external database may not be up yet when a server starts (a compose file or a unit starting
// both at once, a failover): start-up waits for it a while, instead of exiting on the first
// refused connection, and fails at once on what waiting will not mend (a refused password, an
// unknown database or host).
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "services/status.h"
#include "storage/pg.h"

namespace trainyard::storage {

struct DatabaseWait {
  std::chrono::milliseconds up_to{0};  // 0: one attempt
  // Asked between attempts; true ends the wait (serve: a SIGTERM or Ctrl-C arrived).
  std::function<bool()> give_up;
};

// Whether a failed connection, by libpq's words, may succeed later: nothing listening yet, or the
// server starting up, recovering or shutting down for a restart.
bool ConnectionMayComeUp(std::string_view libpq_message);

// pg::Pool::Create, tried again (250 ms apart, doubling to 2 s, each wait logged as
// `database_unavailable`) while the failure may come up and the wait lasts.
StatusOr<std::unique_ptr<pg::Pool>> CreatePoolWaiting(const std::string& conninfo, int size,
                                                      std::chrono::milliseconds checkout_timeout,
                                                      const DatabaseWait& wait);

}  // namespace trainyard::storage
