#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace trainyard {

// Microsecond precision matches PostgreSQL timestamptz, so a value survives a round trip unchanged.
using Timestamp = std::chrono::sys_time<std::chrono::microseconds>;
using Duration = std::chrono::nanoseconds;

inline Timestamp FromUnixMicros(int64_t us) { return Timestamp(std::chrono::microseconds(us)); }
inline int64_t ToUnixMicros(Timestamp t) { return t.time_since_epoch().count(); }

// RFC 3339 in UTC with all six fraction digits ("2026-11-29T11:22:35.000000Z"): timestamptz
// parses it exactly, whatever the session's TimeZone or DateStyle.
std::string FormatUtcMicros(Timestamp t);

}  // namespace trainyard
