#include "services/model/duration_text.h"

#include <cstdint>
#include <limits>

namespace trainyard {

std::optional<Duration> ParseDurationText(std::string_view text, bool allow_negative) {
  const bool negative = allow_negative && !text.empty() && text.front() == '-';
  if (negative) text.remove_prefix(1);
  if (text.size() < 2 || text.back() != 's') return std::nullopt;
  text.remove_suffix(1);
  // Duration is int64 nanoseconds (about ±292 years, inside the proto's ±10,000 years): refuse
  // what it cannot hold rather than wrap around.
  constexpr uint64_t kNanosPerSecond = 1'000'000'000;
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  uint64_t seconds = 0;
  uint64_t nanos = 0;
  size_t i = 0;
  if (text[i] < '0' || text[i] > '9') return std::nullopt;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    seconds = seconds * 10 + static_cast<uint64_t>(text[i] - '0');
    if (seconds > kMax / kNanosPerSecond) return std::nullopt;
  }
  if (i < text.size()) {
    if (text[i] != '.' || i + 1 == text.size() || text.size() - i - 1 > 9) return std::nullopt;
    int digits = 0;
    for (++i; i < text.size(); ++i, ++digits) {
      if (text[i] < '0' || text[i] > '9') return std::nullopt;
      nanos = nanos * 10 + static_cast<uint64_t>(text[i] - '0');
    }
    for (; digits < 9; ++digits) nanos *= 10;
  }
  const uint64_t total = seconds * kNanosPerSecond + nanos;
  if (total > kMax) return std::nullopt;
  const Duration value(static_cast<int64_t>(total));
  return negative ? -value : value;
}

std::string ShortDuration(Duration d) {
  auto s = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  if (s < 60) return std::to_string(s) + "s";
  auto h = s / 3600;
  auto m = (s % 3600) / 60;
  if (h == 0) return std::to_string(m) + "m";
  return std::to_string(h) + "h" + (m > 0 ? std::to_string(m) + "m" : "");
}

}  // namespace trainyard
