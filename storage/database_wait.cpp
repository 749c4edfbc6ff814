#include "storage/database_wait.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <thread>

#include "services/log.h"

namespace trainyard::storage {

bool ConnectionMayComeUp(std::string_view libpq_message) {
  // libpq's and the server's own words (lc_messages C): a refused TCP port, a missing Unix
  // socket, a connect_timeout, and the states a postmaster refuses sessions in for a while.
  static constexpr std::array kTransient = {
      std::string_view("Connection refused"),
      std::string_view("No such file or directory"),
      std::string_view("timeout expired"),
      std::string_view("the database system is starting up"),
      std::string_view("the database system is not yet accepting connections"),
      std::string_view("the database system is in recovery mode"),
      std::string_view("the database system is shutting down"),
  };
  return std::any_of(kTransient.begin(), kTransient.end(), [&](std::string_view words) {
    return libpq_message.find(words) != std::string_view::npos;
  });
}

StatusOr<std::unique_ptr<pg::Pool>> CreatePoolWaiting(const std::string& conninfo, int size,
                                                      std::chrono::milliseconds checkout_timeout,
                                                      const DatabaseWait& wait) {
  using std::chrono::milliseconds;
  const auto started = std::chrono::steady_clock::now();
  const auto deadline = started + wait.up_to;
  milliseconds delay(250);
  for (int attempt = 1;; ++attempt) {
    auto pool = pg::Pool::Create(conninfo, size, checkout_timeout);
    if (pool.ok() || !ConnectionMayComeUp(pool.status().message())) return pool;
    const bool stop = wait.give_up && wait.give_up();
    if (stop || std::chrono::steady_clock::now() + delay > deadline) {
      if (attempt == 1 && !stop) return pool;
      const std::chrono::duration<double> waited = std::chrono::steady_clock::now() - started;
      char over[96];
      std::snprintf(over, sizeof over, " (%d attempt%s over %.1f s%s)", attempt,
                    attempt == 1 ? "" : "s", waited.count(), stop ? ", then a stop was asked" : "");
      return Status(pool.status().code(), pool.status().message() + over);
    }
    LogJson(LogLevel::kWarn, "database_unavailable",
            {{"attempt", attempt},
             {"error", pool.status().message()},
             {"retry_in_ms", static_cast<int64_t>(delay.count())}});
    std::this_thread::sleep_for(delay);
    delay = std::min(delay * 2, milliseconds(2000));
  }
}

}  // namespace trainyard::storage
