#pragma once
// Conversions between SQL text parameters/columns and domain values, shared by the repositories.
// Timestamps travel as integer microseconds since the epoch, so nothing is lost to rounding.
#include <optional>
#include <string>

#include "services/model/custom_job.h"
#include "storage/pg.h"

namespace trainyard::storage {

// SQL for "the timestamptz $n given in microseconds" and for "column as microseconds".
#define TY_TS(n) "('epoch'::timestamptz + " n "::bigint * interval '1 microsecond')"
#define TY_MICROS(col) "(extract(epoch from " col ") * 1000000)::bigint"

inline std::optional<std::string> MicrosParam(std::optional<Timestamp> t) {
  if (!t) return std::nullopt;
  return std::to_string(ToUnixMicros(*t));
}
inline std::string MicrosParam(Timestamp t) { return std::to_string(ToUnixMicros(t)); }

inline std::optional<Timestamp> OptionalTime(const pg::Result& r, int row, int col) {
  if (r.IsNull(row, col)) return std::nullopt;
  return FromUnixMicros(r.GetInt64(row, col));
}

}  // namespace trainyard::storage
