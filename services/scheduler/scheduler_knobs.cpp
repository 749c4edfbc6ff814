#include "services/scheduler/scheduler_knobs.h"

#include <charconv>

#include "services/model/duration_text.h"

namespace trainyard {

std::optional<std::string> SetSchedulerKnob(SchedulerConfig& config, std::string_view name,
                                            std::string_view text) {
  if (name == "holdAfter") {
    std::optional<Duration> d = ParseDurationText(text);
    if (!d) return "must be a duration such as \"0s\" or \"1800s\"";
    config.reserve_min_wait = *d;
  } else if (name == "holdsPerCycle") {
    int n = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (error != std::errc() || end != text.data() + text.size() || n < 1 || n > 1000) {
      return "must be a whole number from 1 to 1000";
    }
    config.max_reservations = n;
  } else if (name == "requeueTimestamp") {
    if (text != "Creation" && text != "Eviction") return "must be \"Creation\" or \"Eviction\"";
    config.requeue_timestamp =
        text == "Eviction" ? RequeueTimestamp::kEviction : RequeueTimestamp::kCreation;
  } else {
    return "is not a scheduler knob (" + std::string(kSchedulerKnobNames) + ")";
  }
  return std::nullopt;
}

}  // namespace trainyard
