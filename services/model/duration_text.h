#pragma once
#include <optional>
#include <string_view>

#include "services/model/time.h"

namespace trainyard {

// "3600s", "1.5s", "0.000001s": the proto3 JSON form of google.protobuf.Duration, non-negative.
std::optional<Duration> ParseDurationText(std::string_view text);

}  // namespace trainyard
