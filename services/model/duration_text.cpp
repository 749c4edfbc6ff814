#include "services/model/duration_text.h"

#include <cstdint>
#include <limits>

namespace trainyard {

std::optional<Duration> ParseDurationText(std::string_view text) {
  if (text.size() < 2 || text.back() != 's') return std::nullopt;
  text.remove_suffix(1);
  int64_t seconds = 0;
  int64_t nanos = 0;
  size_t i = 0;
  if (i == text.size() || text[i] < '0' || text[i] > '9') return std::nullopt;
  // Duration is int64 nanoseconds (about ±292 years, inside the proto's ±10,000 years): refuse
  // what it cannot hold rather than wrap around.
  constexpr int64_t kMaxSeconds = std::numeric_limits<int64_t>::max() / 1'000'000'000 - 1;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    seconds = seconds * 10 + (text[i] - '0');
    if (seconds > kMaxSeconds) return std::nullopt;
  }
  if (i < text.size()) {
    if (text[i] != '.' || i + 1 == text.size() || text.size() - i - 1 > 9) return std::nullopt;
    int digits = 0;
    for (++i; i < text.size(); ++i, ++digits) {
      if (text[i] < '0' || text[i] > '9') return std::nullopt;
      nanos = nanos * 10 + (text[i] - '0');
    }
    for (; digits < 9; ++digits) nanos *= 10;
  }
  return std::chrono::seconds(seconds) + std::chrono::nanoseconds(nanos);
}

}  // namespace trainyard
