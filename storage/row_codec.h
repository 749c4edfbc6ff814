#pragma once
// Conversions between SQL text parameters/columns and domain values, shared by the repositories.
// Timestamps travel as integer microseconds since the epoch, so nothing is lost to rounding.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "services/model/custom_job.h"
#include "storage/pg.h"

namespace trainyard::storage {

// SQL for "the timestamptz $n given in microseconds" and for "column as microseconds".
#define TY_TS(n) "('epoch'::timestamptz + " n "::bigint * interval '1 microsecond')"
#define TY_MICROS(col) "(extract(epoch from " col ") * 1000000)::bigint"
// The consumption model of a placement's first pool ('' when unplaced), from column `placement`.
#define TY_PLACEMENT_MODEL(placement) "COALESCE(" placement "->'pools'->0->>'consumptionModel', '')"

inline std::optional<std::string> MicrosParam(std::optional<Timestamp> t) {
  if (!t) return std::nullopt;
  return std::to_string(ToUnixMicros(*t));
}
inline std::string MicrosParam(Timestamp t) { return std::to_string(ToUnixMicros(t)); }

inline std::optional<Timestamp> OptionalTime(const pg::Result& r, int row, int col) {
  if (r.IsNull(row, col)) return std::nullopt;
  return FromUnixMicros(r.GetInt64(row, col));
}

// `value` as an element of an array literal: quoted, with quotes and backslashes escaped.
inline void AppendArrayElement(std::string& out, std::string_view value) {
  out += '"';
  for (char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
}

// A PostgreSQL array literal of text values: {"a","b\"c"}.
inline std::string TextArray(const std::vector<std::string>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    AppendArrayElement(out, values[i]);
  }
  return out + "}";
}

// The same with absent values as NULL: {"a",NULL}.
inline std::string NullableTextArray(const std::vector<std::optional<std::string>>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    if (values[i]) {
      AppendArrayElement(out, *values[i]);
    } else {
      out += "NULL";
    }
  }
  return out + "}";
}

template <typename T>
std::string NumberArray(const std::vector<T>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(values[i]);
  }
  return out + "}";
}

}  // namespace trainyard::storage
