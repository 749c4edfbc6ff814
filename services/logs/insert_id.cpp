#include "services/logs/insert_id.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace trainyard {
namespace {

constexpr size_t kTimeDigits = 17;  // microseconds since 1970 stay below 10^17 until year 5138
constexpr size_t kSeqDigits = 19;   // any non-negative int64

bool ParseDigits(std::string_view text, int64_t* out) {
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    int digit = c - '0';
    if (value > (INT64_MAX - digit) / 10) return false;
    value = value * 10 + digit;
  }
  *out = value;
  return true;
}

}  // namespace

std::string FormatInsertId(const InsertId& id) {
  // Negative values never occur (virtual time starts at the wall clock; sequences start at 1);
  // clamping keeps the width fixed, which the string order depends on.
  long long us = std::max<int64_t>(0, ToUnixMicros(id.time));
  long long seq = std::max<int64_t>(0, id.seq);
  char buf[64];  // 37 characters; room for what the compiler cannot prove about %017lld
  std::snprintf(buf, sizeof buf, "%017lld%019lld%c", us, seq, static_cast<char>(id.source));
  return buf;
}

std::optional<InsertId> ParseInsertId(std::string_view text) {
  if (text.size() != kTimeDigits + kSeqDigits + 1) return std::nullopt;
  int64_t us = 0, seq = 0;
  if (!ParseDigits(text.substr(0, kTimeDigits), &us) ||
      !ParseDigits(text.substr(kTimeDigits, kSeqDigits), &seq)) {
    return std::nullopt;
  }
  char letter = text.back();
  if (letter != static_cast<char>(LogSource::kServiceEvent) &&
      letter != static_cast<char>(LogSource::kReplicaLine) &&
      letter != static_cast<char>(LogSource::kDropNotice)) {
    return std::nullopt;
  }
  return InsertId{FromUnixMicros(us), seq, static_cast<LogSource>(letter)};
}

}  // namespace trainyard
