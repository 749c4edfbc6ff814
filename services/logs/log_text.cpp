#include "services/logs/log_text.h"

#include <algorithm>

namespace trainyard {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
constexpr std::string_view kTruncated = "\xE2\x80\xA6[truncated]";

// Length of the valid UTF-8 sequence at s[i], or 0 when it is not one (RFC 3629: no overlongs,
// no surrogates, nothing above U+10FFFF).
size_t ValidSequence(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return n;
}

}  // namespace

std::string SanitizeLogMessage(std::string_view raw) {
  std::string out;
  out.reserve(std::min(raw.size(), kMaxLogMessageBytes + kTruncated.size()));
  size_t i = 0;
  while (i < raw.size()) {
    size_t n = ValidSequence(raw, i);
    std::string_view piece = n == 0 ? kReplacement : raw.substr(i, n);
    i += n == 0 ? 1 : n;
    if (piece == std::string_view("\0", 1)) continue;
    if (out.size() + piece.size() > kMaxLogMessageBytes) {
      out += kTruncated;
      break;
    }
    out += piece;
  }
  return out;
}

}  // namespace trainyard
