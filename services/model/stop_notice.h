#pragma once
// The reasons that tell a job its machines stop at a known time: a spot VM's reclaim (30 s on
// Compute Engine), the end of a calendar reservation's window, a preemption's termination grace.
// A real VM's shutdown script hears each as a notice; a runtime whose replicas are real processes
// warns them (SIGTERM) when the notice is given, and the stop comes when it runs out.
#include <string_view>

namespace trainyard {

inline constexpr std::string_view kSpotNotice = "SPOT_NOTICE";
inline constexpr std::string_view kWindowEndNotice = "WINDOW_END";
inline constexpr std::string_view kPreemptionNotice = "PREEMPTION_NOTICE";

inline bool IsStopNotice(std::string_view reason_code) {
  return reason_code == kSpotNotice || reason_code == kWindowEndNotice ||
         reason_code == kPreemptionNotice;
}

}  // namespace trainyard
