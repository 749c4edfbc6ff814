#pragma once
// The scheduler's knobs an operator sets, by the names a scenario's "scheduler" object and serve's
// --scheduler flag both give them, checked in one place so each refuses the same values the same
// way.
#include <optional>
#include <string>
#include <string_view>

#include "services/scheduler/scheduler.h"

namespace trainyard {

// The knobs SetSchedulerKnob takes, as a refusal lists them.
inline constexpr std::string_view kSchedulerKnobNames =
    "holdAfter, holdsPerCycle, requeueTimestamp";

// Sets one knob from its text:
//   holdAfter         a duration ("0s", "1800s"): a waiting job holds capacity after this wait;
//   holdsPerCycle     1 to 1000: how many waiting jobs may hold capacity in one cycle;
//   requeueTimestamp  "Creation" or "Eviction": what a requeued job queues by.
// nullopt when set; otherwise what is wrong, a phrase to follow the knob's name ("must be …").
std::optional<std::string> SetSchedulerKnob(SchedulerConfig& config, std::string_view name,
                                            std::string_view text);

}  // namespace trainyard
