#pragma once
// insertIds that give job logs one total, stable order. gcloud pages with
// `(timestamp="T" AND insertId>"I") OR timestamp>"T"` and compares insertIds as strings, so an
// entry's insertId must sort, as a string, exactly where the entry sorts. It is built from the
// entry's own position: its time in microseconds (17 digits), a sequence number from its source
// table (19 digits) and a letter for the source, so the string order is the (time, seq, source)
// order, and an insertId alone is a complete resume position (`after=<insertId>`).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "services/time.h"

namespace trainyard {

// Where an entry comes from; the letter orders entries with equal time and sequence number.
enum class LogSource : char {
  kServiceEvent = 'e',  // a row of job_events
  kReplicaLine = 'l',   // a row of job_log_lines
  kDropNotice = 'n',    // "N lines dropped", placed right after the last kept head line
};

struct InsertId {
  Timestamp time{};
  int64_t seq = 0;
  LogSource source = LogSource::kReplicaLine;

  auto operator<=>(const InsertId&) const = default;
};

// "0001800000000000000000000000000000042l"
std::string FormatInsertId(const InsertId& id);
// nullopt unless `text` is exactly what FormatInsertId makes.
std::optional<InsertId> ParseInsertId(std::string_view text);

}  // namespace trainyard
