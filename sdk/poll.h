#pragma once
// Polling until a resource is done: the shared loop under Client::WaitJob and WaitOperation.
// Delays follow Backoff (initial 1 s, ×1.5, capped, jittered); the overall deadline bounds the
// whole wait, and the last sleep is shortened so the deadline is not overshot.
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "sdk/backoff.h"
#include "sdk/timing.h"
#include "services/status.h"

namespace trainyard::sdk {

template <typename T>
struct WaitOptionsFor {
  std::optional<std::chrono::milliseconds> timeout;  // none: wait until done
  BackoffPolicy poll{std::chrono::milliseconds(1000), 1.5, std::chrono::milliseconds(10000), 0.2};
  // Called with the first reading and then whenever what the caller watches changes (for jobs:
  // the state, or the reason / queue position the server gives).
  std::function<void(const T&)> on_change;
};

template <typename T>
struct PollHooks {
  std::function<StatusOr<T>()> fetch;
  std::function<bool(const T&)> done;
  std::function<std::string(const T&)> change_key;  // a change of this calls on_change
  std::function<std::string(const T&)> describe;    // for the timeout message
};

// The done resource, the first error of fetch, or DEADLINE_EXCEEDED naming the last reading.
template <typename T>
StatusOr<T> PollUntilDone(const Timing& timing, const WaitOptionsFor<T>& options,
                          const PollHooks<T>& hooks) {
  const auto start = timing.now();
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (options.timeout) deadline = start + *options.timeout;
  Backoff backoff(options.poll, timing.uniform01);
  std::optional<std::string> last_key;
  for (;;) {
    StatusOr<T> current = hooks.fetch();
    if (!current.ok()) return current.status();
    std::string key = hooks.change_key(*current);
    if (key != last_key) {
      last_key = std::move(key);
      if (options.on_change) options.on_change(*current);
    }
    if (hooks.done(*current)) return current;
    auto delay = backoff.Next();
    if (deadline) {
      const auto now = timing.now();
      if (now >= *deadline) {
        // The wait asked for, not the clock's reading: the last fetch may have run a little past
        // the deadline, and the user recognises their own --timeout.
        return Status(
            Code::kDeadlineExceeded,
            "timed out after " + FormatElapsed(*options.timeout) + ": " + hooks.describe(*current));
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - now);
      if (left < delay) delay = left;
    }
    timing.sleep(delay);
  }
}

}  // namespace trainyard::sdk
