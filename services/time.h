#pragma once
#include <chrono>
#include <cstdint>

namespace trainyard {

// Microsecond precision matches PostgreSQL timestamptz, so a value survives a round trip unchanged.
using Timestamp = std::chrono::sys_time<std::chrono::microseconds>;
using Duration = std::chrono::nanoseconds;

inline Timestamp FromUnixMicros(int64_t us) { return Timestamp(std::chrono::microseconds(us)); }
inline int64_t ToUnixMicros(Timestamp t) { return t.time_since_epoch().count(); }

}  // namespace trainyard
