#pragma once
// The one parser of duration text, shared by the wire (google.protobuf.Duration in JSON), the
// simulator's knobs, the scheduler's labels and the fleet file, so "1.5s" means one thing
// everywhere.
#include <optional>
#include <string>
#include <string_view>

#include "services/time.h"

namespace trainyard {

// "3600s", "1.5s", "0.000001s": the proto3 JSON form of google.protobuf.Duration (seconds with at
// most 9 fraction digits and an "s"). A leading "-" only with allow_negative (proto Durations may
// be negative; run times and timeouts may not). nullopt when malformed or beyond what Duration
// holds (about ±292 years).
std::optional<Duration> ParseDurationText(std::string_view text, bool allow_negative = false);

// What people read in a message: "24h", "3h20m", "45m", "30s".
std::string ShortDuration(Duration d);

}  // namespace trainyard
